package gc_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// requestLog records, in order, the requests an S3 server received that ask
// for the bucket's versioning and those that delete.
type requestLog struct {
	mu     sync.Mutex
	events []string
	deny   bool // answer GetBucketVersioning with 403 AccessDenied
}

func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, versioning := r.URL.Query()["versioning"]
		_, deletes := r.URL.Query()["delete"]
		l.mu.Lock()
		switch {
		case versioning && r.Method == http.MethodGet:
			l.events = append(l.events, "versioning")
		case r.Method == http.MethodDelete || deletes && r.Method == http.MethodPost:
			l.events = append(l.events, "delete")
		}
		deny := l.deny && versioning && r.Method == http.MethodGet
		l.mu.Unlock()
		if deny {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (l *requestLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// TestRunReportsDeleteRecovery: gc on a versioned S3 bucket (gofakes3)
// reports what the service keeps of the blobs it deletes, asked once per
// run and before the first delete, whether it deletes for good (--no-trash)
// or marks; on a local store in the same run it reports nothing; a service
// that refuses the question makes it unknown and the run goes on unchanged.
func TestRunReportsDeleteRecovery(t *testing.T) {
	ctx := context.Background()
	for _, deny := range []bool{false, true} {
		for _, noTrash := range []bool{true, false} {
			t.Run(fmt.Sprintf("deny=%v/no-trash=%v", deny, noTrash), func(t *testing.T) {
				log := &requestLog{deny: deny}
				srv := storetest.StartS3(t, log.wrap)
				st, err := store.Open(ctx, srv.Bucket(t, "recovery"))
				must(t, err)
				defer st.Close()
				var c *s3.Client
				if !st.(*store.BucketStore).Blob().As(&c) {
					t.Fatal("no *s3.Client")
				}
				_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
					Bucket:                  aws.String("recovery"),
					VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled},
				})
				must(t, err)
				for _, k := range []string{"kept.png", "old.png"} {
					must(t, st.Put(ctx, k, strings.NewReader(k), store.PutOptions{}))
				}
				local := newFixture(t)
				local.blob(t, "old local", 48*time.Hour)
				dir := t.TempDir()
				must(t, os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"messages":[{"parts":[{"media":{"uri":"kept.png"}},{"media":{"uri":"`+filepath.Join(local.inbound, local.blob(t, "kept local", 48*time.Hour))+`"}}]}]}`), 0o600))
				src, err := sessions.Open(ctx, dir, sessions.Options{})
				must(t, err)
				defer src.Close()

				rep, err := gc.Run(ctx, gc.RunOptions{
					Options: gc.Options{Sessions: []sessions.Source{src}, Now: time.Now().Add(48 * time.Hour)},
					Stores:  []store.Store{st, local.st},
					Delete:  true,
					NoTrash: noTrash,
					Guards:  gc.Guards{MaxDeletePercent: 100},
				})
				must(t, err)
				if rep.Outcome != outcome.OK {
					t.Fatalf("outcome %v: %v / %v", rep.Outcome, rep.Stores[0].Err, rep.Stores[1].Err)
				}
				bucket, loc := rep.Stores[0], rep.Stores[1]
				d := bucket.DeleteRecovery
				switch {
				case d == nil:
					t.Fatal("no delete_recovery for the bucket")
				case deny && (d.Kind != store.RecoveryUnknown || !strings.Contains(d.Detail, "AccessDenied") || !strings.Contains(d.Detail, "s3:GetBucketVersioning")):
					t.Errorf("refused question: delete_recovery %+v, want unknown naming AccessDenied and the permission", d)
				case !deny && (d.Kind != store.RecoveryS3Versioning || d.Retention != "" || !strings.Contains(d.Detail, "versioning is enabled")):
					t.Errorf("delete_recovery %+v, want s3-versioning kept until removed", d)
				}
				if loc.DeleteRecovery != nil {
					t.Errorf("a local store reports delete_recovery %+v", loc.DeleteRecovery)
				}
				if noTrash {
					if bucket.Result == nil || bucket.Result.Deleted != 1 {
						t.Fatalf("--no-trash deleted %+v, want old.png", bucket.Result)
					}
				} else if bucket.Marks == nil || bucket.Marks.Marked != 1 {
					t.Fatalf("marked %+v, want old.png", bucket.Marks)
				}
				events := log.get()
				asked := 0
				for i, e := range events {
					if e == "versioning" {
						asked++
						if asked == 1 && strings.Contains(strings.Join(events[:i], " "), "delete") {
							t.Errorf("the bucket was asked about versioning after a delete: %v", events)
						}
					}
				}
				if asked != 1 {
					t.Errorf("the bucket was asked about versioning %d times, want once: %v", asked, events)
				}
				if noTrash && !strings.Contains(strings.Join(events, " "), "delete") {
					t.Errorf("no delete request seen: %v", events)
				}
			})
		}
	}
}
