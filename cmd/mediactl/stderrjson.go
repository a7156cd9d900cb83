package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
)

// sdkLine is a line of the AWS SDK's default logger ("SDK 2026/12/01
// 18:44:13 WARN falling back to IMDSv1: …"), which the SDK's config loader
// builds on os.Stderr for the credential chain, out of mediactl's reach.
var sdkLine = regexp.MustCompile(`^SDK \d{4}/\d\d/\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) (.*)$`)

// jsonStderr keeps --log-format json's promise for the lines other code
// writes through os.Stderr: while the command runs, os.Stderr is a pipe whose
// every line becomes a JSON record (kind "library") on the real stderr. It
// changes the os.Stderr variable only, not file descriptor 2, so that a
// crash's trace still reaches the terminal as it is. The returned function
// puts os.Stderr back and writes what is left.
func jsonStderr(real io.Writer) (restore func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	saved := os.Stderr
	os.Stderr = w
	log := slog.New(slog.NewJSONHandler(real, nil))
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			if line == "" {
				continue
			}
			level, msg := slog.LevelWarn, line
			if m := sdkLine.FindStringSubmatch(line); m != nil {
				msg = m[2]
				level.UnmarshalText([]byte(m[1]))
			}
			log.Log(context.Background(), level, msg, "kind", "library")
		}
		io.Copy(io.Discard, r) // a line longer than the buffer: drain
	}()
	return func() {
		os.Stderr = saved
		w.Close()
		<-done
		r.Close()
	}
}
