module github.com/apiary-net/apiary

go 1.26.0

require (
	github.com/spf13/pflag v1.0.10
	go.uber.org/dig v1.19.0
	go.uber.org/goleak v1.3.0
)
