package plugin

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/apiary-net/apiary/cells/api/client"
)

// cniError turns an error of a command into a CNI error: the agent
// unreachable or not ready to give an address is code 11 ("try again
// later") naming the socket; a request the agent refuses is code 7
// (invalid configuration) with its reason; the rest is 999.
func cniError(op, socket string, err error) error {
	var (
		te *types.Error
		ue *client.UnreachableError
		ae *client.APIError
	)
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &ue):
		return types.NewError(types.ErrTryAgainLater, fmt.Sprintf("%s: cannot reach apiary-agent at %s: is it running?", op, ue.Socket), ue.Err.Error())
	case errors.As(err, &ae) && ae.StatusCode == http.StatusServiceUnavailable:
		return types.NewError(types.ErrTryAgainLater, fmt.Sprintf("%s: apiary-agent at %s cannot serve it now: %s", op, socket, ae.Message), ae.Error())
	case errors.As(err, &ae) && ae.StatusCode == http.StatusBadRequest:
		return types.NewError(types.ErrInvalidNetworkConfig, fmt.Sprintf("%s: apiary-agent at %s refused the endpoint: %s", op, socket, ae.Message), ae.Error())
	default:
		return types.NewError(types.ErrInternal, fmt.Sprintf("%s: %v", op, err), "")
	}
}

// isStatus says whether err is an answer of the agent with code.
func isStatus(err error, code int) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.StatusCode == code
}
