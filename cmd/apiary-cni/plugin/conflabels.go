package plugin

import (
	"errors"
	"fmt"
)

// conventionArgs is the "args" key of a network configuration as the CNI
// conventions define it: runtimes put per-container values there, and
// "args.cni.labels" is the conventions' place for a container's labels.
type conventionArgs struct {
	CNI struct {
		Labels []conventionLabel `json:"labels,omitempty"`
	} `json:"cni"`
}

// conventionLabel is one entry of "args.cni.labels".
type conventionLabel struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// configLabels checks the configuration's "labels" and
// "args.cni.labels" and returns them in that order as "key=value"
// strings; each error names the field and index.
func configLabels(conf *NetConf) ([]string, error) {
	var out []string
	var errs []error
	for i, s := range conf.Labels {
		if err := checkLabel(s); err != nil {
			errs = append(errs, fmt.Errorf("field labels[%d]: %w", i, err))
			continue
		}
		out = append(out, s)
	}
	if conf.Args != nil {
		for i, l := range conf.Args.CNI.Labels {
			s := l.Key + "=" + l.Value
			if err := checkLabel(s); err != nil {
				errs = append(errs, fmt.Errorf("field args.cni.labels[%d]: %w", i, err))
				continue
			}
			out = append(out, s)
		}
	}
	return out, errors.Join(errs...)
}
