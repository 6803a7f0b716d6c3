//go:build !linux && !darwin

package deploytree

func exchange(a, b string) error { return errNoExchange }
