module github.com/apiary-net/apiary

go 1.26.0

require (
	github.com/spf13/pflag v1.0.10
	go.uber.org/dig v1.19.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/stretchr/testify v1.8.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
