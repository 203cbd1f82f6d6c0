module gpurack.lab/k8s-build/netcheck

go 1.26.0
