//go:build !amd64 || purego

package sha256pair

const accelerated = false

func blocks1(a *[8]uint32, pa *byte, n int)        { panic("unreachable") }
func blocks2(a, b *[8]uint32, pa, pb *byte, n int) { panic("unreachable") }
