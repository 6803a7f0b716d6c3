package par

// A Future is a value being computed by a goroutine of its own (Go).
type Future[T any] struct {
	done chan struct{}
	v    T
}

// Go starts fn in a goroutine of its own and returns its future value.
func Go[T any](fn func() T) *Future[T] {
	f := &Future[T]{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.v = fn()
	}()
	return f
}

// Wait returns the value once fn has returned; every call returns the same
// value.
func (f *Future[T]) Wait() T {
	<-f.done
	return f.v
}
