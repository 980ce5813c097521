package simulate

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/policy/policyapi"
)

var (
	labelName      = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`)
	labelKeyPrefix = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// checkLabels checks Kubernetes label keys and values, as the API server
// would; field names the map ("labels").
func checkLabels(field string, ls map[string]string) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		if msg := checkLabelKey(k); msg != "" {
			errs = append(errs, fmt.Errorf("%s: key %q: %s", field, k, msg))
		}
		if v := ls[k]; len(v) > 63 || !labelName.MatchString(v) {
			errs = append(errs, fmt.Errorf("%s: value %q of %s: must be at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric", field, v, k))
		}
	}
	return errs
}

func checkLabelKey(k string) string {
	name := k
	if prefix, rest, ok := strings.Cut(k, "/"); ok {
		if len(prefix) > 253 || !labelKeyPrefix.MatchString(prefix) {
			return "the prefix must be a DNS subdomain"
		}
		name = rest
	}
	if name == "" || len(name) > 63 || !labelName.MatchString(name) {
		return "the name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
	}
	return ""
}

// checkNames checks a cluster name and a namespace name (either may be
// empty) as policy/policyapi checks its options.
func checkNames(cluster, namespace string) error {
	var errs []error
	if cluster != "" {
		errs = append(errs, policyapi.Options{ClusterName: cluster}.Validate())
	}
	if namespace != "" {
		if err := (policyapi.Options{ClusterName: defaultCluster, DefaultNamespace: namespace}).Validate(); err != nil {
			errs = append(errs, errors.New(strings.TrimPrefix(err.Error(), "default ")))
		}
	}
	return errors.Join(errs...)
}
