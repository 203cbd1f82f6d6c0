module gpurack.lab/k8s-build/s3probe

go 1.26.0
