package cell

// Shutdowner lets any cell ask the hive to stop. Run returns the error of
// a fatal shutdown; a clean shutdown makes Run return nil.
type Shutdowner interface {
	Shutdown(opts ...ShutdownOption)
}

// ShutdownOption modifies a shutdown request.
type ShutdownOption func(*ShutdownRequest)

// ShutdownRequest is what a Shutdown call asks for.
type ShutdownRequest struct {
	Err error
}

// ShutdownWithError makes the shutdown fatal: Run returns err.
func ShutdownWithError(err error) ShutdownOption {
	return func(r *ShutdownRequest) { r.Err = err }
}
