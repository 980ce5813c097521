package models

import "time"

// ControllerStatus is one element of the body of GET /v1/controllers:
// what `apiary status --all-controllers` shows of a named controller.
type ControllerStatus struct {
	Name                string     `json:"name"`
	Module              string     `json:"module"`
	RunInterval         string     `json:"run-interval,omitempty"`
	Runs                int        `json:"runs"`
	SuccessCount        int        `json:"success-count"`
	FailureCount        int        `json:"failure-count"`
	ConsecutiveFailures int        `json:"consecutive-failure-count"`
	LastSuccess         *time.Time `json:"last-success,omitempty"`
	LastFailure         *time.Time `json:"last-failure,omitempty"`
	LastError           string     `json:"last-error,omitempty"`
}
