module gpurack.lab/k8s-build/pause

go 1.26.0
