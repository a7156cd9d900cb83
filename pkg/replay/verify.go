package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// verifier passes on the bytes of src while hashing them and, at src's end,
// returns io.EOF only when they hash to want and number wantSize (when known,
// ≥ 0); otherwise a *MismatchError, on that Read and every later one. A
// source that runs past wantSize fails as soon as it does. fill, when set,
// receives a copy of the bytes and is committed to the cache only at a
// verified end; it is dropped on a mismatch, a failed write or a Close before
// the end.
type verifier struct {
	src      io.ReadCloser
	location string
	want     [sha256.Size]byte
	wantSize int64
	h        hash.Hash
	n        int64
	err      error // sticky: the end reached, verified (io.EOF) or not
	fill     *cacheFill
}

func newVerifier(src io.ReadCloser, location string, want [sha256.Size]byte, wantSize int64) *verifier {
	return &verifier{src: src, location: location, want: want, wantSize: wantSize, h: sha256.New()}
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.src.Read(p)
	if n > 0 {
		v.h.Write(p[:n])
		if v.fill != nil && !v.fill.write(p[:n]) {
			v.fill = nil // the cache fill failed: keep serving, fill nothing
		}
		v.n += int64(n)
		if v.wantSize >= 0 && v.n > v.wantSize {
			return n, v.fail()
		}
	}
	switch err {
	case nil:
		return n, nil
	case io.EOF:
		var got [sha256.Size]byte
		v.h.Sum(got[:0])
		if got != v.want || (v.wantSize >= 0 && v.n != v.wantSize) {
			return n, v.fail()
		}
		v.err = io.EOF
		if v.fill != nil {
			v.fill.commit()
			v.fill = nil
		}
		return n, io.EOF
	default:
		return n, err
	}
}

// fail ends the read with a *MismatchError and drops the cache fill.
func (v *verifier) fail() error {
	var got [sha256.Size]byte
	v.h.Sum(got[:0])
	v.err = &MismatchError{Location: v.location, Want: hex.EncodeToString(v.want[:]), Got: hex.EncodeToString(got[:]), WantSize: v.wantSize, Size: v.n}
	if v.fill != nil {
		v.fill.abort()
		v.fill = nil
	}
	return v.err
}

func (v *verifier) Close() error {
	err := v.src.Close()
	if v.fill != nil {
		v.fill.abort()
		v.fill = nil
	}
	return err
}
