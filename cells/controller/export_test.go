package controller

import "github.com/apiary-net/apiary/cells/job"

// init turns the error backoff's jitter off: the tests of this package
// check exact retry schedules.
func init() { errorRetryJitter = job.NoJitter }
