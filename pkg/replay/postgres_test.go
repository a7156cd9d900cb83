package replay_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestPostgresAttachments: the agent-runs layout — messages in Postgres whose
// metadata (jsonb) keeps each attachment as {bucket, path}, objects in an S3
// bucket under agent-inputs/{user_id}/{thread_id}/uploads/ with the sha256
// metadata migrate writes — rehydrates each row's attachments with the row's
// user and thread as Vars; a row naming another user's upload or another
// bucket is refused, and an object altered after it was proven fails.
func TestPostgresAttachments(t *testing.T) {
	pgURL := sessionstest.Postgres(t)
	srv := storetest.StartS3(t, nil)
	bucketURL := srv.Bucket(t, "agent-runs")
	srv.Bucket(t, "other-project")
	s := openStore(t, bucketURL)

	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rnd [4]byte
	rand.Read(rnd[:])
	schema := "replay_" + hex.EncodeToString(rnd[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE") })
	if _, err := conn.Exec(ctx, "CREATE TABLE "+schema+`.messages (id text PRIMARY KEY, user_id text, thread_id text, content text, metadata jsonb)`); err != nil {
		t.Fatal(err)
	}
	type attachment struct {
		Type     string `json:"type"`
		Bucket   string `json:"bucket"`
		Path     string `json:"path"`
		Mime     string `json:"mime"`
		Filename string `json:"filename"`
	}
	want := map[string][]byte{}
	insert := func(id, user, thread string, atts ...attachment) {
		md, _ := json.Marshal(map[string]any{"attachments": atts})
		if _, err := conn.Exec(ctx, "INSERT INTO "+schema+".messages VALUES ($1, $2, $3, $4, $5)", id, user, thread, "see attached", string(md)); err != nil {
			t.Fatal(err)
		}
	}
	upload := func(user, thread, name string) attachment {
		data := pngBlob(5000)
		key := "agent-inputs/" + user + "/" + thread + "/uploads/" + name
		putObject(t, s, key, data, data)
		want[key] = data
		return attachment{Type: "binary", Bucket: "agent-runs", Path: key, Mime: "image/png", Filename: name}
	}
	insert("m1", "u1", "t1", upload("u1", "t1", "a.png"), upload("u1", "t1", "b.png"))
	insert("m2", "u2", "t9", upload("u2", "t9", "c.png"))
	theirs := attachment{Type: "binary", Bucket: "agent-runs", Path: "agent-inputs/u2/t9/uploads/c.png"}
	insert("m3", "u1", "t1", theirs) // u1's row naming u2's upload
	insert("m4", "u1", "t1", attachment{Type: "binary", Bucket: "other-project", Path: "agent-inputs/u1/t1/uploads/a.png"})
	altered := upload("u1", "t2", "d.png")
	putObject(t, s, altered.Path, pngBlob(5000), want[altered.Path]) // replaced after the copy was proven
	insert("m5", "u1", "t2", altered)

	r := newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: bucketURL, Prefixes: []string{"agent-inputs/{user}/{thread}/uploads/"}}}})
	rows, err := conn.Query(ctx, "SELECT id, user_id, thread_id, metadata FROM "+schema+".messages ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id, user, thread string
		atts             []attachment
	}
	var all []row
	for rows.Next() {
		var rw row
		var md struct {
			Attachments []attachment `json:"attachments"`
		}
		if err := rows.Scan(&rw.id, &rw.user, &rw.thread, &md); err != nil {
			t.Fatal(err)
		}
		rw.atts = md.Attachments
		all = append(all, rw)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	served := 0
	for _, rw := range all {
		for _, a := range rw.atts {
			rc, info, err := r.OpenObject(ctx, a.Bucket, a.Path, replay.Vars{"user": rw.user, "thread": rw.thread})
			switch rw.id {
			case "m3":
				wantRefused(t, a.Bucket+"/"+a.Path, err, replay.ErrPrefixNotAllowed)
				continue
			case "m4":
				wantRefused(t, a.Bucket+"/"+a.Path, err, replay.ErrBucketNotAllowed)
				continue
			}
			if err != nil {
				t.Fatalf("row %s: OpenObject(%s, %s) = %v", rw.id, a.Bucket, a.Path, err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if rw.id == "m5" {
				if !errors.Is(err, replay.ErrDigestMismatch) {
					t.Errorf("row m5: the altered object read with %v, want ErrDigestMismatch", err)
				}
				continue
			}
			if err != nil || string(got) != string(want[a.Path]) || info.SHA256 != sum(want[a.Path]) {
				t.Fatalf("row %s: %s read %d bytes, %v", rw.id, a.Path, len(got), err)
			}
			served++
		}
	}
	if served != 3 {
		t.Errorf("%d attachments served, want 3", served)
	}
}
