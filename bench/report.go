package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// report is everything one run measured, printed as a table or JSON.
type report struct {
	Machine  machine     `json:"machine"`
	Settings settings    `json:"settings"`
	Results  []*row      `json:"results"`
	Argon2   []argonRow  `json:"argon2,omitempty"`
	Servers  []serverRow `json:"servers,omitempty"`
	Seeding  []seedRow   `json:"seeding,omitempty"`
	Jobs     []jobRow    `json:"jobs,omitempty"`
	Skipped  []string    `json:"skipped,omitempty"`
	Failures []string    `json:"failures,omitempty"`
	Notes    []string    `json:"notes,omitempty"` // -observe's paired differences
}

// seedRow is how long filling the audit log took on one database.
type seedRow struct {
	DB        string  `json:"db"`
	Rows      int     `json:"rows"`
	OrgRows   int     `json:"audited_org_rows"`
	OtherOrgs int     `json:"other_orgs"`
	Seconds   float64 `json:"seconds"`
	Analyzed  bool    `json:"analyzed,omitempty"` // ANALYZE ran after (PostgreSQL)
}

type machine struct {
	Cores  int    `json:"cores"`
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	Go     string `json:"go"`
	CPU    string `json:"cpu,omitempty"`
	MemGiB int    `json:"mem_gib,omitempty"`
	// LoadAvg is /proc/loadavg's 1-minute figure when the run started: a
	// busy machine makes every figure lower.
	LoadAvg string `json:"load_avg_at_start,omitempty"`
}

type settings struct {
	Conns         int      `json:"conns"`
	Duration      string   `json:"duration"`
	Warmup        string   `json:"warmup"`
	FloodConns    int      `json:"flood_conns"`
	FloodDuration string   `json:"flood_duration"`
	Targets       []string `json:"targets"`
	DBs           []string `json:"dbs,omitempty"`
	URL           string   `json:"url,omitempty"`
}

// row is one target measured on one database.
type row struct {
	Target          string         `json:"target"`
	DB              string         `json:"db"`
	Conns           int            `json:"conns"`
	Requests        uint64         `json:"requests"`
	Seconds         float64        `json:"seconds"`
	RPS             float64        `json:"rps"`
	P50MS           float64        `json:"p50_ms"`
	P99MS           float64        `json:"p99_ms"`
	MeanMS          float64        `json:"mean_ms"`
	MaxMS           float64        `json:"max_ms"`
	Errors          uint64         `json:"errors"`
	Statuses        map[int]uint64 `json:"statuses"`
	TransportErrors uint64         `json:"transport_errors"`
	Late            uint64         `json:"late"`
	LateErrors      uint64         `json:"late_errors"`
	ErrorSamples    []string       `json:"error_samples,omitempty"`
	PeakRSSMiB      float64        `json:"peak_rss_mib,omitempty"`
	CPU             *cpuShare      `json:"cpu,omitempty"` // from the measured window to the last answer
	// ServerCPUPerReq is the server's CPU time per answer in that
	// window, in microseconds (0: unknown):
	// steadier than req/s where the client shares the cores, since it
	// does not move with how the cores were split.
	ServerCPUPerReq float64  `json:"server_cpu_us_per_request,omitempty"`
	VsBaselinePct   float64  `json:"vs_baseline_pct,omitempty"`
	LogLines        int      `json:"server_log_lines,omitempty"`
	LogProblems     int      `json:"server_log_problems,omitempty"`
	LogSamples      []string `json:"server_log_samples,omitempty"`
	Notes           []string `json:"notes,omitempty"` // problems seen by the target
	Info            []string `json:"info,omitempty"`  // remarks on how it was measured
}

// argonRow compares concurrent sign-in with back-to-back password hashing.
type argonRow struct {
	DB            string  `json:"db"`
	SingleMeanMS  float64 `json:"single_login_mean_ms"`
	SingleP50MS   float64 `json:"single_login_p50_ms"`
	SingleErrors  uint64  `json:"single_login_errors"`
	Cores         int     `json:"cores"`
	IdealRPS      float64 `json:"ideal_rps"`
	LoginConns    int     `json:"login_conns"`
	LoginRPS      float64 `json:"login_rps"`
	EfficiencyPct float64 `json:"efficiency_pct"`
}

// serverRow sums up one gatehouse process over all its targets.
type serverRow struct {
	DB          string   `json:"db"`
	LogLines    int      `json:"log_lines"`
	LogProblems int      `json:"log_problems"`
	LogSamples  []string `json:"log_samples,omitempty"`
	HWMMiB      float64  `json:"vm_hwm_mib,omitempty"`
}

func newReport(c config) *report {
	r := &report{
		Machine: machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()},
		Settings: settings{
			Conns: c.conns, Duration: c.duration.String(), Warmup: c.warmup.String(),
			FloodConns: c.floodConns, FloodDuration: c.floodDuration.String(),
			Targets: c.targets, URL: c.url,
		},
		Results: []*row{},
	}
	if c.url == "" {
		r.Settings.DBs = c.dbs
	}
	r.Machine.CPU, r.Machine.MemGiB = cpuAndMemory()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			r.Machine.LoadAvg = f[0]
		}
	}
	return r
}

func newRow(target, db string, conns int, res *loadResult, peakRSS float64) *row {
	return &row{
		Target:          target,
		DB:              db,
		Conns:           conns,
		Requests:        res.requests,
		Seconds:         res.elapsed.Seconds(),
		RPS:             res.rps(),
		P50MS:           ms(res.latency.percentile(50)),
		P99MS:           ms(res.latency.percentile(99)),
		MeanMS:          ms(res.latency.mean()),
		MaxMS:           ms(res.latency.max),
		Errors:          res.errors,
		Statuses:        res.statuses,
		TransportErrors: res.transport,
		Late:            res.late,
		LateErrors:      res.lateErrors,
		ErrorSamples:    res.errSamples,
		PeakRSSMiB:      peakRSS,
	}
}

// serverCPUPerReq is the server's CPU time per answer of x, in
// microseconds; 0 when unknown.
func serverCPUPerReq(x *row) float64 {
	n := x.Requests + x.Late
	if x.CPU == nil || x.CPU.ServerSeconds == 0 || n == 0 {
		return 0
	}
	return x.CPU.ServerSeconds * 1e6 / float64(n)
}

func (r *report) add(x *row) {
	r.Results = append(r.Results, x)
	r.ratios()
}

// ratios sets the rate of every gatehouse row run at the baseline's
// concurrency as a share of the baseline's.
func (r *report) ratios() {
	var base float64
	var conns int
	for _, x := range r.Results {
		if x.Target == "baseline" {
			base, conns = x.RPS, x.Conns
		}
	}
	if base == 0 {
		return
	}
	for _, x := range r.Results {
		// Like with like: a run at another concurrency (-also-c, the
		// flood) is not compared.
		if x.Target != "baseline" && x.Conns == conns {
			x.VsBaselinePct = 100 * x.RPS / base
		}
	}
}

func (r *report) addServer(db string, srv *server) {
	lines, problems, samples := srv.logs.since(logCounts{})
	s := serverRow{DB: db, LogLines: lines, LogProblems: problems, LogSamples: samples}
	if kib, err := readStatusKiB(srv.pid(), "VmHWM:"); err == nil {
		s.HWMMiB = float64(kib) / 1024
	}
	r.Servers = append(r.Servers, s)
}

func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeText prints the table, the argon2 and memory lines, and every
// problem seen: non-2xx answers, transport errors, server log lines.
func (r *report) writeText(w io.Writer) {
	r.writeMachine(w)
	if len(r.Results) > 0 {
		r.writeTable(w)
	}
	r.writeFindings(w)
	problems := r.problems()
	fmt.Fprintln(w)
	for _, x := range r.Results {
		if x.CPU != nil && x.CPU.Other > 10 {
			fmt.Fprintf(w, "warning: %s on %s: other processes used %.0f%% of the CPU during the run; its figures are low\n", x.Target, x.DB, x.CPU.Other)
		}
	}
	if len(problems) == 0 {
		fmt.Fprintln(w, "problems: none (every answer 2xx, no error, warning or lock lines in the server logs)")
		return
	}
	fmt.Fprintln(w, "problems:")
	for _, p := range problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}

// writeMachine prints what the run was measured on and how.
func (r *report) writeMachine(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "\nmachine: %d cores, %s/%s, %s", m.Cores, m.OS, m.Arch, m.Go)
	if m.CPU != "" {
		fmt.Fprintf(w, ", %s", m.CPU)
	}
	if m.MemGiB > 0 {
		fmt.Fprintf(w, ", %d GiB", m.MemGiB)
	}
	if m.LoadAvg != "" {
		fmt.Fprintf(w, ", load average %s at start", m.LoadAvg)
	}
	if len(r.Results) > 0 {
		fmt.Fprintf(w, "\nclosed loop, %s warm-up then %s per target; flood %d connections for %s",
			r.Settings.Warmup, r.Settings.Duration, r.Settings.FloodConns, r.Settings.FloodDuration)
	}
	if len(r.Jobs) > 0 {
		fmt.Fprintf(w, "\njobs: %d connections for %s each, no warm-up", r.Jobs[0].Conns, r.Settings.Duration)
	}
	fmt.Fprint(w, "\n\n")
}

// writeTable prints one row per target and database.
func (r *report) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tdb\tconns\treq/s\tp50\tp99\terrors\tpeak RSS\tvs baseline\tCPU srv/gen/pg/other/idle\tsrv CPU/req\t")
	for _, x := range r.Results {
		vs := ""
		if x.VsBaselinePct > 0 {
			vs = fmt.Sprintf("%.1f%%", x.VsBaselinePct)
		}
		rss := ""
		if x.PeakRSSMiB > 0 {
			rss = fmt.Sprintf("%.0f MiB", x.PeakRSSMiB)
		}
		cpu := ""
		if c := x.CPU; c != nil {
			cpu = fmt.Sprintf("%.0f/%.0f/%.0f/%.0f/%.0f%%", c.Server, c.Bench, c.Postgres, c.Other, c.Idle)
		}
		perReq := ""
		if x.ServerCPUPerReq > 0 {
			perReq = fmt.Sprintf("%.0f µs", x.ServerCPUPerReq)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n",
			x.Target, x.DB, x.Conns, fmtRPS(x.RPS), fmtMS(x.P50MS), fmtMS(x.P99MS), x.Errors, rss, vs, cpu, perReq)
	}
	tw.Flush()
}

// writeFindings prints the argon2, memory and seeding lines, each target's
// notes and what was skipped.
func (r *report) writeFindings(w io.Writer) {
	if len(r.Argon2) > 0 {
		fmt.Fprintln(w)
	}
	for _, a := range r.Argon2 {
		fmt.Fprintf(w, "argon2 (%s): one login takes %s at 1 connection (p50 %s), so %d cores could do %.1f logins/s; login at %d connections did %.1f/s = %.0f%% (target ≥ 85%%)\n",
			a.DB, fmtMS(a.SingleMeanMS), fmtMS(a.SingleP50MS), a.Cores, a.IdealRPS, a.LoginConns, a.LoginRPS, a.EfficiencyPct)
	}
	for _, x := range r.Results {
		if strings.HasPrefix(x.Target, "flood") && x.PeakRSSMiB > 0 {
			fmt.Fprintf(w, "memory (%s): peak RSS %.1f MiB during %d-connection login flood (target < 300 MiB)\n", x.DB, x.PeakRSSMiB, x.Conns)
		}
	}
	for _, s := range r.Seeding {
		fmt.Fprintf(w, "audit log (%s): seeded %d entries (%d for the audited org, the rest over %d other org ids) in %.1f s (target < 120 s)",
			s.DB, s.Rows, s.OrgRows, s.OtherOrgs, s.Seconds)
		if s.Analyzed {
			fmt.Fprint(w, ", ANALYZE included")
		}
		fmt.Fprintln(w)
	}
	for _, j := range r.Jobs {
		fmt.Fprintln(w, j.text())
	}
	for _, x := range r.Results {
		for _, n := range x.Info {
			fmt.Fprintf(w, "%s (%s): %s\n", x.Target, x.DB, n)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, n)
	}
}

// problems lists failed requests, server log problems, notes and failures.
func (r *report) problems() []string {
	problems := r.jobProblems()
	for _, x := range r.Results {
		if x.Errors > 0 || x.LateErrors > 0 {
			p := fmt.Sprintf("%s on %s: %d of %d requests failed (statuses %s", x.Target, x.DB, x.Errors, x.Requests, statusSummary(x.Statuses))
			if x.TransportErrors > 0 {
				p += fmt.Sprintf(", %d transport errors", x.TransportErrors)
			}
			p += ")"
			if x.LateErrors > 0 {
				p += fmt.Sprintf("; and %d of %d requests in flight at the deadline failed after it", x.LateErrors, x.Late)
			}
			for _, s := range x.ErrorSamples {
				p += "\n      " + s
			}
			problems = append(problems, p)
		}
		if x.LogProblems > 0 {
			p := fmt.Sprintf("%s on %s: %d server log lines look like problems, e.g.", x.Target, x.DB, x.LogProblems)
			for _, s := range x.LogSamples {
				p += "\n      " + s
			}
			problems = append(problems, p)
		}
		for _, n := range x.Notes {
			problems = append(problems, fmt.Sprintf("%s on %s: %s", x.Target, x.DB, n))
		}
	}
	for _, s := range r.Servers {
		if s.LogProblems > 0 {
			problems = append(problems, fmt.Sprintf("gatehouse on %s: %d problem lines of %d log lines in all", s.DB, s.LogProblems, s.LogLines))
		}
	}
	for _, f := range r.Failures {
		problems = append(problems, strings.ReplaceAll(f, "\n", "\n    "))
	}
	return problems
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtMS prints milliseconds with three significant digits or so.
func fmtMS(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.3f ms", v)
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func fmtRPS(v float64) string {
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// cpuAndMemory reads the CPU model and total memory on Linux.
func cpuAndMemory() (cpu string, memGiB int) {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					if kib, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						memGiB = int((kib + 512*1024) / (1024 * 1024))
					}
				}
			}
		}
	}
	return cpu, memGiB
}
