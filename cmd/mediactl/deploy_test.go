package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/mediactl/mediactl/internal/releaseconf"
	"github.com/mediactl/mediactl/pkg/metrics"
)

// mediactlLines are the mediactl command lines a deploy recipe runs.
type mediactlLine struct {
	file string
	args []string
}

// checkParses runs each command line with --help: the flags parse (a typo
// or a flag this version lacks is a usage error, exit 2) and nothing runs.
func checkParses(t *testing.T, lines []mediactlLine) {
	t.Helper()
	for _, l := range lines {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"mediactl"}, l.args...), "--help")
		if code := run(args, &stdout, &stderr); code != exitOK {
			t.Errorf("%s: %q does not parse (exit %d): %s", l.file, strings.Join(l.args, " "), code, stderr.String())
		}
	}
}

// TestDeploySystemd: the units are well-formed (sections and keys this
// recipe may use, absolute paths), their ExecStart lines are mediactl
// command lines this version accepts, and they run niced, idle-I/O, with a
// stop timeout longer than mediactl's stop time.
func TestDeploySystemd(t *testing.T) {
	known := map[string][]string{
		"Unit":    {"Description", "Documentation", "After", "Wants"},
		"Service": {"Type", "User", "Group", "ExecStart", "ExecStartPost", "Nice", "IOSchedulingClass", "CPUSchedulingPolicy", "TimeoutStopSec", "KillMode"},
		"Timer":   {"OnCalendar", "RandomizedDelaySec", "Persistent", "Unit"},
		"Install": {"WantedBy"},
	}
	files, _ := filepath.Glob("../../deploy/systemd/*")
	if len(files) != 4 {
		t.Fatalf("%d unit files, want 4", len(files))
	}
	var lines []mediactlLine
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		section := ""
		keys := map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
			case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
				section = strings.Trim(line, "[]")
				if _, ok := known[section]; !ok {
					t.Errorf("%s:%d: unknown section %s", f, n, line)
				}
			default:
				k, v, ok := strings.Cut(line, "=")
				if !ok || !slices.Contains(known[section], k) {
					t.Errorf("%s:%d: %q is not a key of [%s] this recipe uses", f, n, line, section)
					continue
				}
				keys[section+"."+k] = v
				if strings.HasPrefix(k, "Exec") {
					fields := execFields(v)
					if fields[0] != packageBinary(t) {
						t.Errorf("%s:%d: %s runs %s, not %s, where the .deb and .rpm install mediactl (cron and systemd have no PATH of yours)", f, n, k, fields[0], packageBinary(t))
					}
					lines = append(lines, mediactlLine{f, fields[1:]})
					if strings.Contains(f, "verify") && !slices.Contains(fields, "--subset") {
						t.Errorf("%s:%d: the verify unit says it checks a seventh of the store each night, but has no --subset", f, n)
					}
				}
			}
		}
		if strings.HasSuffix(f, ".service") {
			if keys["Service.Nice"] == "" || keys["Service.IOSchedulingClass"] != "idle" {
				t.Errorf("%s: not niced / not idle I/O", f)
			}
			if d, err := time.ParseDuration(keys["Service.TimeoutStopSec"] + "s"); err != nil || d < 10*time.Second {
				t.Errorf("%s: TimeoutStopSec %q leaves mediactl no time to release its lock", f, keys["Service.TimeoutStopSec"])
			}
		}
		if strings.HasSuffix(f, ".timer") && keys["Timer.OnCalendar"] == "" {
			t.Errorf("%s: no OnCalendar", f)
		}
	}
	checkParses(t, lines)
}

// execFields splits an Exec line as systemd and, for "/bin/sh -c '…'", the
// shell would: the mediactl command line inside, "$$" as "$" and "%%" as "%",
// a command substitution as the value it may give ("$(date +%u)" is a day
// of the week, 1).
func execFields(v string) []string {
	if script, ok := strings.CutPrefix(v, "/bin/sh -c '"); ok {
		script = strings.TrimSuffix(script, "'")
		script = strings.NewReplacer("$$", "$", "%%", "%").Replace(script)
		script = strings.ReplaceAll(script, "$(date +%u)", "1")
		script = strings.TrimPrefix(script, "exec ")
		fields := strings.Fields(script)
		for i, f := range fields {
			fields[i] = strings.Trim(f, `"`)
		}
		return fields
	}
	return strings.Fields(v)
}

// packageBinary is where the .deb and .rpm install mediactl: goreleaser.yaml's
// nfpms bindir.
func packageBinary(t *testing.T) string {
	t.Helper()
	c, err := releaseconf.Load("../../goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.NFPMs) == 0 || c.NFPMs[0].Bindir == "" {
		t.Fatal("goreleaser.yaml: no nfpms bindir")
	}
	return path.Join(c.NFPMs[0].Bindir, "mediactl")
}

// TestDeploySystemdAnalyze: systemd itself accepts the units, in a root
// where mediactl is where the packages put it. systemd-analyze verify checks
// each unit's syntax, its dependencies and that every command it runs is an
// executable file; the root holds this machine's system units (the targets
// the units depend on) and an executable at the package's path.
func TestDeploySystemdAnalyze(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze not found (apt-get install systemd); CI=true runs this check")
		}
		t.Skip("systemd-analyze not found")
	}
	root := t.TempDir()
	var systemUnits string
	for _, d := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		if st, err := os.Stat(d + "/sysinit.target"); err == nil && st.Mode().IsRegular() {
			systemUnits = d
			break
		}
	}
	if systemUnits == "" {
		t.Skip("no system units on this machine to verify against")
	}
	if err := os.CopyFS(filepath.Join(root, "usr/lib/systemd/system"), os.DirFS(systemUnits)); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{packageBinary(t), "/bin/sh", "/usr/bin/date"} {
		p := filepath.Join(root, bin)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	units, _ := filepath.Glob("../../deploy/systemd/*")
	etc := filepath.Join(root, "etc/systemd/system")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(etc, filepath.Base(u)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "/etc/systemd/system/"+filepath.Base(u))
	}
	out, err := exec.Command(analyze, append([]string{"verify", "--root=" + root}, args...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The check has teeth: without the binary at the package's path, the
	// same verify fails.
	if err := os.Remove(filepath.Join(root, packageBinary(t))); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, append([]string{"verify", "--root=" + root}, args...)...).CombinedOutput(); err == nil {
		t.Fatalf("systemd-analyze verify passed without %s:\n%s", packageBinary(t), out)
	}
}

// TestDeployKubernetes: the CronJob and its claim decode strictly into the
// Kubernetes API types, never overlap, give mediactl more than its stop time
// to finish, keep the journal on a volume, and run a command line this
// version accepts.
func TestDeployKubernetes(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/gc-cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(b, []byte("\n---\n"))
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a CronJob and a PersistentVolumeClaim", len(docs))
	}
	var cj batchv1.CronJob
	if err := yaml.UnmarshalStrict(docs[0], &cj); err != nil {
		t.Fatalf("CronJob: %v", err)
	}
	var pvc corev1.PersistentVolumeClaim
	if err := yaml.UnmarshalStrict(docs[1], &pvc); err != nil {
		t.Fatalf("PersistentVolumeClaim: %v", err)
	}
	if cj.Kind != "CronJob" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("kind %s, concurrencyPolicy %q: want a CronJob that forbids overlap", cj.Kind, cj.Spec.ConcurrencyPolicy)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 10 {
		t.Errorf("terminationGracePeriodSeconds %v: mediactl needs a few seconds after SIGTERM", g)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s", pod.RestartPolicy)
	}
	claimed := false
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			claimed = true
		}
	}
	if !claimed {
		t.Error("no volume of the claim: a journal would not survive the pod")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Resources.Limits.Memory().IsZero() {
		t.Error("no memory limit")
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.ReplaceAll(a, "$(SESSIONS_URL)", "postgres://reader@db/app")
	}
	checkParses(t, []mediactlLine{{"gc-cronjob.yaml", args}})
}

// TestDeployCI: the GitHub Actions workflow is a workflow (strictly the keys
// it uses) and its mediactl step is a command line this version accepts.
func TestDeployCI(t *testing.T) {
	b, err := os.ReadFile("../../deploy/ci/verify.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Name string         `json:"name"`
		On   map[string]any `json:"on"`
		Jobs map[string]struct {
			RunsOn         string `json:"runs-on"`
			TimeoutMinutes int    `json:"timeout-minutes"`
			Steps          []struct {
				Name string            `json:"name"`
				Uses string            `json:"uses"`
				If   string            `json:"if"`
				With map[string]any    `json:"with"`
				Env  map[string]string `json:"env"`
				Run  string            `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.UnmarshalStrict(b, &wf); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	var lines []mediactlLine
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			run := strings.ReplaceAll(s.Run, "\\\n", " ")
			i := strings.Index(run, `/bin/mediactl" `)
			if i < 0 {
				continue
			}
			fields := strings.Fields(strings.NewReplacer(`"$SESSIONS_URL"`, "postgres://reader@db/app", "'", "").Replace(run[i+len(`/bin/mediactl" `):]))
			if j := slices.Index(fields, ">"); j >= 0 {
				fields = fields[:j]
			}
			lines = append(lines, mediactlLine{"verify.yml", fields})
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d mediactl steps, want 1", len(lines))
	}
	checkParses(t, lines)
}

// TestDeployAlerts: the alert rules decode strictly as Prometheus rule
// groups, and every metric they name is one mediactl writes.
func TestDeployAlerts(t *testing.T) {
	b, err := os.ReadFile("../../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &rules); err != nil {
		t.Fatalf("rules: %v", err)
	}
	written := map[string]bool{}
	for _, g := range metrics.Gauges() {
		written[string(g)] = true
	}
	names := regexp.MustCompile(`mediactl_[a-z_]+`)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" {
				t.Errorf("rule %+v lacks alert, expr or severity", r)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
				}
			}
			for _, m := range names.FindAllString(r.Expr, -1) {
				if !written[m] {
					t.Errorf("%s: %s is not a metric mediactl writes", r.Alert, m)
				}
			}
		}
	}
	if n < 3 {
		t.Fatalf("%d rules", n)
	}
}

// TestDeployKubernetesSharded: the sharded recipes are an Indexed Job (one
// wrapped in a CronJob that forbids overlap) whose pods each run one shard
// of as many as the Job has completions, with a per-index retry budget, a
// memory limit, and no retry of the exit codes a retry cannot change.
func TestDeployKubernetesSharded(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("../../deploy/kubernetes", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var cj batchv1.CronJob
	if err := yaml.UnmarshalStrict(read("sharded-gc-cronjob.yaml"), &cj); err != nil {
		t.Fatalf("sharded-gc-cronjob.yaml: %v", err)
	}
	if cj.Kind != "CronJob" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("sharded gc: kind %s, concurrencyPolicy %q", cj.Kind, cj.Spec.ConcurrencyPolicy)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(read("sharded-verify-job.yaml"), &job); err != nil {
		t.Fatalf("sharded-verify-job.yaml: %v", err)
	}
	if job.Kind != "Job" {
		t.Errorf("sharded verify: kind %s", job.Kind)
	}
	for name, spec := range map[string]batchv1.JobSpec{"sharded-gc-cronjob.yaml": cj.Spec.JobTemplate.Spec, "sharded-verify-job.yaml": job.Spec} {
		if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
			t.Errorf("%s: completionMode %v, want Indexed", name, spec.CompletionMode)
		}
		if spec.BackoffLimitPerIndex == nil {
			t.Errorf("%s: no backoffLimitPerIndex", name)
		}
		if spec.Completions == nil || spec.Parallelism == nil || *spec.Parallelism > *spec.Completions {
			t.Errorf("%s: completions %v, parallelism %v", name, spec.Completions, spec.Parallelism)
			continue
		}
		pod := spec.Template.Spec
		if len(pod.Containers) != 1 {
			t.Fatalf("%s: %d containers", name, len(pod.Containers))
		}
		c := pod.Containers[0]
		if c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: no memory limit", name)
		}
		if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 10 {
			t.Errorf("%s: terminationGracePeriodSeconds %v", name, g)
		}
		want := "--shard=auto/" + strconv.Itoa(int(*spec.Completions))
		if !slices.Contains(c.Args, want) {
			t.Errorf("%s: args %q lack %s: the shards must be as many as the completions", name, c.Args, want)
		}
		noRetry := false
		if p := spec.PodFailurePolicy; p != nil {
			for _, r := range p.Rules {
				if r.Action == batchv1.PodFailurePolicyActionFailIndex && r.OnExitCodes != nil && slices.Contains(r.OnExitCodes.Values, int32(exitUsage)) {
					noRetry = true
				}
			}
		}
		if !noRetry {
			t.Errorf("%s: a usage error (exit %d) would be retried", name, exitUsage)
		}
		args := make([]string, len(c.Args))
		for i, a := range c.Args {
			args[i] = strings.ReplaceAll(a, "$(SESSIONS_URL)", "postgres://reader@db/app")
		}
		checkParses(t, []mediactlLine{{name, args}})
	}
}
