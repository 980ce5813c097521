package main

import "github.com/apiary-net/apiary/cmd/apiary-cni/plugin"

func main() { plugin.Main() }
