//go:build amd64 && !purego

package sha256pair

//go:generate sh -c "python3 gen_asm.py > block_amd64.s"

import "golang.org/x/sys/cpu"

// SHA-NI is CPUID leaf 7 EBX bit 29 (x/sys/cpu does not report it); the code
// also uses SSSE3, SSE4.1 and AVX encodings of the shuffles and adds.
var accelerated = cpu.X86.HasAVX && cpu.X86.HasSSE41 && cpu.X86.HasSSSE3 && cpuid7ebx()&(1<<29) != 0

func cpuid7ebx() uint32

// blocks1 hashes n blocks at pa into a (SHA-NI; block_amd64.s).
//
//go:noescape
func blocks1(a *[8]uint32, pa *byte, n int)

// blocks2 hashes n blocks at pa into a and n blocks at pb into b, interleaved.
//
//go:noescape
func blocks2(a, b *[8]uint32, pa, pb *byte, n int)
