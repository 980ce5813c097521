package bench

// InOrder runs a then b in even rounds, b then a in odd ones, so that
// neither side of a comparison always meets the colder kernel and
// allocator state.
func InOrder(round int, a, b func() error) error {
	if round%2 == 1 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}
