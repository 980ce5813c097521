package models

import "github.com/apiary-net/apiary/cells/job"

// Controller is one element of the body of GET /v1/controllers.
type Controller = job.ControllerStatus
