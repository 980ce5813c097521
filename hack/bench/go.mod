module github.com/apiary-net/apiary/hack/bench

go 1.26.0

require (
	github.com/apiary-net/apiary v0.0.0
	go.uber.org/fx v1.24.0
)

require (
	github.com/spf13/pflag v1.0.10 // indirect
	go.uber.org/dig v1.19.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.26.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/apiary-net/apiary => ../..
