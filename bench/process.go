package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// server is a subprocess that serves HTTP: gatehouse or the baseline.
type server struct {
	name     string
	cmd      *exec.Cmd
	url      string // http://HOST:PORT from its "listening on" line
	logs     *logWatch
	logFile  *os.File
	exited   chan struct{} // closed once the process has exited
	waitErr  error         // set before exited is closed
	exitedAt time.Time     // set before exited is closed
	stopping atomic.Bool   // the bench asked it to stop
	readers  sync.WaitGroup
}

// listeningRE finds the address in a "listening on http://HOST:PORT" line,
// whether the log is text (msg="listening on …") or JSON.
var listeningRE = regexp.MustCompile(`listening on (http://[^\s"\\]+)`)

// startServer starts path with args and environment, copies its stdout and
// stderr to logPath and a logWatch, and returns once it has logged the
// address it listens on (or fails after startTimeout).
func startServer(ctx context.Context, name, path string, args, environ []string, logPath string, startTimeout time.Duration) (*server, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Env = environ
	cmd.SysProcAttr = childAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &server{name: name, cmd: cmd, logs: newLogWatch(), logFile: f, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	var fileMu sync.Mutex
	for _, r := range []io.Reader{stdout, stderr} {
		s.readers.Go(func() { s.logs.consume(r, f, &fileMu) })
	}
	go func() {
		s.readers.Wait() // Wait must not run before the pipes are drained
		s.waitErr = cmd.Wait()
		s.exitedAt = time.Now()
		close(s.exited)
	}()

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case u := <-s.logs.listening:
		s.url = u
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("%s exited before listening (%s); last log lines:\n%s", name, s.exitStatus(), s.logs.tailText())
	case <-timer.C:
		s.stop()
		return nil, fmt.Errorf("%s logged no \"listening on http://…\" line within %v; last log lines:\n%s", name, startTimeout, s.logs.tailText())
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
}

// pid returns the process id.
func (s *server) pid() int { return s.cmd.Process.Pid }

// alive reports whether the process is still running.
func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// stop asks the process group to terminate, kills it after five seconds,
// and waits for it. It is safe to call more than once.
func (s *server) stop() {
	s.stopping.Store(true)
	if s.alive() {
		signalGroup(s.cmd, sigTerm)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			signalGroup(s.cmd, sigKill)
			<-s.exited
		}
	}
	s.logFile.Close()
}

// exitStatus describes how the process ended.
func (s *server) exitStatus() string {
	if s.waitErr == nil {
		return "exit status 0: a clean shutdown, which gatehouse does on SIGINT or SIGTERM"
	}
	return s.waitErr.Error()
}

// died returns an error if the process has exited without the bench
// stopping it, with how and when it ended and its last log lines.
// A nil server (one the bench did not start) never dies.
func (s *server) died() error {
	if s == nil || s.alive() || s.stopping.Load() {
		return nil
	}
	return fmt.Errorf("%s exited on its own at %s (%s); nothing in the bench stopped it; last log lines:\n%s",
		s.name, s.exitedAt.Format("15:04:05.000"), s.exitStatus(), s.logs.tailText())
}

// waitHealthy polls GET {url}/health until it answers 2xx.
func waitHealthy(ctx context.Context, client *http.Client, url string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET /health: not healthy within %v: %v", within, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// problemRE marks server log lines worth reporting: errors and warnings,
// panics, and the usual signs of database contention.
var problemRE = regexp.MustCompile(`level=(?i:error|warn)|"level":\s*"(?i:error|warn)|\b(ERROR|WARN)\b|(?i:panic|fatal|goroutine \d+ \[|database is locked|sqlite_busy|\bbusy\b|deadlock|could not serialize|too many (connections|clients)|deadline exceeded)|status=5\d\d|"status":\s*5\d\d`)

// normalizeRE removes what differs between otherwise identical lines
// (times, ids, numbers), to keep one sample of each kind of problem.
var normalizeRE = regexp.MustCompile(`[0-9a-fA-F-]{8,}|\d+`)

const maxLogSamples = 8

// logWatch reads a server's output, finds the listening line, and counts
// problem lines.
type logWatch struct {
	listening chan string

	mu       sync.Mutex
	found    bool
	lines    int
	problems int
	kinds    map[string]bool
	samples  []string
	tail     []string
}

// logCounts is a snapshot of a logWatch, to diff around one target.
type logCounts struct {
	lines, problems, samples int
}

func newLogWatch() *logWatch {
	return &logWatch{listening: make(chan string, 1), kinds: map[string]bool{}}
}

// consume reads r line by line until it ends. It must keep up with the
// server: a full pipe would block the server's logging. Lines go to f in
// one write each time the reader has caught up with the pipe, not one per
// line: a server that logs every sign-in writes thousands a second, and the
// bench shares the server's cores.
func (l *logWatch) consume(r io.Reader, f *os.File, fileMu *sync.Mutex) {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(f, 64<<10)
	flush := func() {
		fileMu.Lock()
		bw.Flush()
		fileMu.Unlock()
	}
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if bw.Available() < len(line) {
				flush()
			}
			bw.WriteString(line)
			l.add(strings.TrimRight(line, "\r\n"))
		}
		if err != nil {
			flush()
			return
		}
		if br.Buffered() == 0 {
			flush()
		}
	}
}

// problemWords holds, in lower case, a word of every alternative of
// problemRE: a line holding none of them cannot match it. Checking them
// first costs a fraction of the expression's match, which took about a
// tenth of the machine's CPU from the server when it logged each of 5,000
// sign-ins a second.
var problemWords = []string{"error", "warn", "panic", "fatal", "goroutine ", "database is locked", "sqlite_busy",
	"busy", "deadlock", "could not serialize", "too many ", "deadline exceeded", "status=5", `"status":`}

// mayBeProblem reports whether line could match problemRE.
func mayBeProblem(line string) bool {
	lower := strings.ToLower(line)
	for _, w := range problemWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

func (l *logWatch) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines++
	l.tail = append(l.tail, line)
	if len(l.tail) > 20 {
		l.tail = l.tail[1:]
	}
	if !l.found {
		if m := listeningRE.FindStringSubmatch(line); m != nil {
			l.found = true
			l.listening <- strings.TrimRight(m[1], "/.,")
			return
		}
	}
	if mayBeProblem(line) && problemRE.MatchString(line) {
		l.problems++
		kind := normalizeRE.ReplaceAllString(line, "#")
		if !l.kinds[kind] && len(l.samples) < maxLogSamples*4 {
			l.kinds[kind] = true
			if len(line) > 300 {
				line = line[:300] + "…"
			}
			l.samples = append(l.samples, line)
		}
	}
}

func (l *logWatch) snapshot() logCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return logCounts{l.lines, l.problems, len(l.samples)}
}

// since returns the problem count and new kinds of problem lines seen
// after the snapshot c.
func (l *logWatch) since(c logCounts) (lines, problems int, samples []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.samples[c.samples:]
	if len(s) > maxLogSamples {
		s = s[:maxLogSamples]
	}
	return l.lines - c.lines, l.problems - c.problems, append([]string(nil), s...)
}

func (l *logWatch) tailText() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return "  " + strings.Join(l.tail, "\n  ")
}

// rssSampler records the peak resident set size of a process.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	peak int64 // KiB; read after done
	ok   bool
}

// sampleRSS reads VmRSS from /proc/<pid>/status every interval until
// finish is called. pid 0 samples nothing.
func sampleRSS(pid int, interval time.Duration) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if pid == 0 {
			return
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if kib, err := readStatusKiB(pid, "VmRSS:"); err == nil {
				s.ok = true
				s.peak = max(s.peak, kib)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// finish stops sampling and returns the peak in MiB, or 0 when unknown.
func (s *rssSampler) finish() float64 {
	close(s.stop)
	<-s.done
	if !s.ok {
		return 0
	}
	return float64(s.peak) / 1024
}

// readStatusKiB returns a "kB" field of /proc/<pid>/status, e.g. "VmRSS:".
func readStatusKiB(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, errors.New("no " + field + " line")
}

// cpuSample is a reading of the machine's and two processes' CPU time, in
// clock ticks, to tell how a run's CPU was shared.
type cpuSample struct {
	total, busy   uint64 // all CPUs, from /proc/stat
	server, bench uint64 // utime+stime of the server and of this process
	postgres      uint64 // utime+stime of every process named postgres
	ok            bool
}

// cpuShare is how a run's CPU was used, as percentages of the machine.
type cpuShare struct {
	Server   float64 `json:"server_pct"`
	Bench    float64 `json:"bench_pct"`
	Postgres float64 `json:"postgres_pct"` // every local PostgreSQL process
	Other    float64 `json:"other_pct"`    // anything else: a busy machine
	Idle     float64 `json:"idle_pct"`
	// ServerSeconds is the server's CPU time (user and system).
	ServerSeconds float64 `json:"server_seconds"`
}

// userHZ is the clock ticks per second of /proc's CPU times: USER_HZ,
// 100 on every Linux architecture Go builds for.
const userHZ = 100

func readCPU(serverPID int) cpuSample {
	var s cpuSample
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return s
	}
	var v [8]uint64
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	s.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	s.total = s.busy + v[3] + v[4]
	s.bench = procTicks("self")
	if serverPID != 0 {
		s.server = procTicks(strconv.Itoa(serverPID))
	}
	s.postgres = postgresTicks()
	s.ok = true
	return s
}

// postgresTicks sums the CPU time of the processes named postgres (a
// backend that exits between two samples is missed).
func postgresTicks() uint64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var sum uint64
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err == nil && strings.Contains(string(b), " (postgres) ") {
			sum += statTicks(b)
		}
	}
	return sum
}

// procTicks returns utime+stime of /proc/<pid>/stat, 0 if unreadable.
func procTicks(pid string) uint64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	return statTicks(b)
}

// statTicks returns utime+stime from the contents of a /proc/<pid>/stat.
func statTicks(b []byte) uint64 {
	// Fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14 and stime 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return u + st
}

// share returns how the CPU was used between a and b; nil if unknown.
func share(a, b cpuSample) *cpuShare {
	if !a.ok || !b.ok || b.total <= a.total {
		return nil
	}
	total := float64(b.total - a.total)
	pct := func(x uint64) float64 { return 100 * float64(x) / total }
	if b.server < a.server {
		return nil // the server is gone: its time can no longer be read
	}
	server, bench := b.server-a.server, b.bench-a.bench
	var pg uint64
	if b.postgres > a.postgres {
		pg = b.postgres - a.postgres
	}
	busy := b.busy - a.busy
	other := int64(busy) - int64(server) - int64(bench) - int64(pg)
	return &cpuShare{
		Server:   pct(server),
		Bench:    pct(bench),
		Postgres: pct(pg),
		Other:    max(0, 100*float64(other)/total),
		Idle:     100 - pct(busy),

		ServerSeconds: float64(server) / userHZ,
	}
}
