package policyapi

import "context"

// DecodeYAML exposes decodeYAML to the external tests: one document
// decoded under limits.
func DecodeYAML(data []byte, limits Limits) (any, error) {
	return decodeYAML(yamlDocument{data: data, line: 1}, newSizeBudget(context.Background(), limits))
}
