//go:build !unix

package sessions

import (
	"context"
	"errors"
)

// filesRewriter is only implemented on Unix systems (see rewrite_files.go).
type filesRewriter struct{ src *filesSource }

func newFilesRewriter(src *filesSource) Rewriter { return &filesRewriter{src: src} }

func (w *filesRewriter) String() string { return w.src.spec }
func (w *filesRewriter) Close() error   { return nil }

func (w *filesRewriter) Rewrite(ctx context.Context, edit Edit, opts RewriteOptions) (RewriteCounts, error) {
	return RewriteCounts{}, errors.New("rewriting session files is only supported on Unix systems")
}
