/*
 * openloop: an open-loop HTTP/1.1 GET load generator for the p99 part of npm run bench.
 *
 * Why not wrk or h2load: wrk keeps N requests in flight (closed loop), so a slow answer slows the
 * load and hides itself. h2load --rps keeps a rate, but measures each request from when it left:
 * a request due while its connection still waits for an answer leaves late and the wait is lost
 * (coordinated omission); and h2load on one core could not keep 24,000 req/s over the hundreds of
 * connections that rate needs. This program does one thing, as wrk2 does it:
 *
 * - Request s (s = 0, 1, ...) is due at t0 + s / rate and goes to connection s mod C. Each
 *   connection therefore sends every C / rate seconds, the connections' phases spread evenly.
 * - A request is sent when it is due, or, when its connection is still waiting for an answer,
 *   as soon as that answer arrives (HTTP/1.1: one request in flight per connection).
 * - Its latency runs from when it was DUE to when its answer was complete, so time spent
 *   waiting behind a slow answer counts against the server, not lost.
 *
 * One thread, epoll_pwait2 with a nanosecond timeout until the next due time (one system call per
 * wake-up: a timerfd cost three, and at 35,000 req/s the generator needed all of its core); the
 * requests are prebuilt strings
 * with a random key out of KEYS. Output: one JSON line on stdout.
 *
 * usage: openloop PORT RATE CONNECTIONS SECONDS WARMUP_SECONDS KEYS PREFIX [SEED]
 * Latencies are kept for the requests due in [warmup, warmup + seconds) (`due`); the run then
 * waits up to 2 s for answers still missing. Every request of the window is accounted for:
 * answered, failed (its write failed or the server closed its connection: `errors`), in flight
 * at the end (`timeouts`), or never sent because its connection was still waiting at the end
 * (`unsent`). A figure is only as good as `answered == due`.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define BUF_BYTES 65536
#define DRAIN_NS 2000000000LL

typedef struct {
  int fd;
  int busy;            /* a request is in flight */
  int64_t k_next;      /* index (per connection) of the next request to send */
  int64_t due_ns;      /* due time of the request in flight */
  int measured;        /* the request in flight is in the measured window */
  size_t len;
  char buf[BUF_BYTES];
} conn_t;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void die(const char *what) {
  fprintf(stderr, "openloop: %s: %s\n", what, strerror(errno));
  exit(2);
}

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t xorshift(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static int port, connections, keys;
static double rate;
static const char *prefix;
static conn_t *conns;
static int epfd;

static int64_t t0, warmup_ns, end_ns;
static int64_t sent_measured, done_measured, non2xx, errors, timeouts, reconnects, unsent, due_window;
static int64_t lat_count, lat_cap;
static uint32_t *lat_us;
static int64_t max_ns;

static int64_t due_of(int c, int64_t k) {
  /* request s = k * C + c is due at t0 + s / rate */
  double s = (double)k * connections + c;
  return t0 + (int64_t)(s * 1e9 / rate);
}

static void open_conn(int c) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) die("socket");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) die("connect");
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)c};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
  conns[c].fd = fd;
  conns[c].len = 0;
}

/* The connection failed (a reset, a failed write): a new one takes its place and its schedule. */
static void reconnect(int c) {
  close(conns[c].fd);
  reconnects++;
  open_conn(c);
}

static void send_request(int c) {
  conn_t *x = &conns[c];
  char req[512];
  unsigned key = (unsigned)(xorshift() % (uint64_t)keys);
  int n = snprintf(req, sizeof req, "GET /v1/cache/%s%u HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", prefix, key, port);
  x->due_ns = due_of(c, x->k_next);
  x->k_next++;
  x->busy = 1;
  x->measured = x->due_ns >= t0 + warmup_ns && x->due_ns < end_ns;
  if (x->measured) sent_measured++;
  /* A request this small fits any socket buffer with room for one in-flight request. */
  ssize_t w = write(x->fd, req, (size_t)n);
  if (w != n) {
    /* A failed write (a reset connection; a partial one is not expected on loopback) fails the
     * request: reconnect, and the connection's next due request goes out on the next sweep. */
    errors++;
    x->busy = 0;
    reconnect(c);
  }
}

static void record(conn_t *x, int64_t now, int status) {
  if (status < 200 || status > 299) non2xx++;
  if (!x->measured) return;
  done_measured++;
  int64_t lat = now - x->due_ns;
  if (lat > max_ns) max_ns = lat;
  if (lat_count == lat_cap) {
    lat_cap = lat_cap ? lat_cap * 2 : 1 << 16;
    lat_us = realloc(lat_us, (size_t)lat_cap * sizeof *lat_us);
    if (!lat_us) die("realloc");
  }
  lat_us[lat_count++] = (uint32_t)(lat / 1000);
}

/* One complete answer at the start of x->buf? Returns its length (0: not yet), sets *status. */
static size_t parse_answer(conn_t *x, int *status) {
  char *end = memmem(x->buf, x->len, "\r\n\r\n", 4);
  if (!end) {
    if (x->len == BUF_BYTES) { errno = EMSGSIZE; die("answer head too large"); }
    return 0;
  }
  size_t head = (size_t)(end - x->buf) + 4;
  if (x->len < 12 || memcmp(x->buf, "HTTP/1.", 7) != 0) { errno = EPROTO; die("not an HTTP/1 answer"); }
  *status = atoi(x->buf + 9);
  size_t body = 0;
  for (char *p = x->buf; p < end; p++) {
    if (*p == '\n' && strncasecmp(p + 1, "content-length:", 15) == 0) { body = (size_t)strtoul(p + 16, NULL, 10); break; }
    if (*p == '\n' && strncasecmp(p + 1, "transfer-encoding:", 18) == 0) { errno = EPROTO; die("chunked answers are not supported"); }
  }
  if (head + body > BUF_BYTES) { errno = EMSGSIZE; die("answer too large"); }
  return x->len >= head + body ? head + body : 0;
}

/* Reads what arrived; a complete answer frees the connection (the next sweep sends what is due). */
static void on_readable(int c) {
  conn_t *x = &conns[c];
  for (;;) {
    ssize_t r = read(x->fd, x->buf + x->len, BUF_BYTES - x->len);
    if (r < 0) {
      if (errno == EAGAIN) return;
      r = 0;
    }
    if (r == 0) {
      /* The server closed the connection: the request in flight failed; reconnect (the next
       * sweep of the main loop sends the connection's next due request). */
      if (x->busy) errors++;
      x->busy = 0;
      reconnect(c);
      return;
    }
    x->len += (size_t)r;
    int status;
    size_t used = parse_answer(x, &status);
    if (used == 0) continue;
    if (x->busy) record(x, now_ns(), status);
    x->busy = 0;
    memmove(x->buf, x->buf + used, x->len - used);
    x->len -= used;
  }
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static double pct(double p) {
  if (lat_count == 0) return 0;
  int64_t i = (int64_t)(p * (double)lat_count);
  if (i >= lat_count) i = lat_count - 1;
  return lat_us[i] / 1000.0;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: openloop PORT RATE CONNECTIONS SECONDS WARMUP_SECONDS KEYS PREFIX [SEED]\n");
    return 2;
  }
  port = atoi(argv[1]);
  rate = atof(argv[2]);
  connections = atoi(argv[3]);
  double seconds = atof(argv[4]), warmup = atof(argv[5]);
  keys = atoi(argv[6]);
  prefix = argv[7];
  if (argc > 8) rng_state = strtoull(argv[8], NULL, 10) | 1;
  if (port <= 0 || rate <= 0 || connections <= 0 || seconds <= 0 || warmup < 0 || keys <= 0) {
    fprintf(stderr, "openloop: bad arguments\n");
    return 2;
  }
  /* A write to a connection the server reset fails with EPIPE instead of killing the generator. */
  signal(SIGPIPE, SIG_IGN);
  /* epoll_pwait2 sleeps with the thread's timer slack (50 us by default): 1 ns wakes it on time. */
  if (prctl(PR_SET_TIMERSLACK, 1UL) < 0) die("prctl PR_SET_TIMERSLACK");
  conns = calloc((size_t)connections, sizeof *conns);
  if (!conns) die("calloc");
  epfd = epoll_create1(0);
  if (epfd < 0) die("epoll_create1");
  for (int c = 0; c < connections; c++) open_conn(c);

  /* Let the handshakes finish before the schedule starts. */
  usleep(100000);
  t0 = now_ns() + 1000000;
  warmup_ns = (int64_t)(warmup * 1e9);
  end_ns = t0 + warmup_ns + (int64_t)(seconds * 1e9);
  double cpu_start = 0;
  int64_t wall_start = 0;
  int cpu_started = 0;

  struct epoll_event evs[256];
  int64_t now = now_ns();
  int64_t cpu_end_wall = 0;
  double cpu_end = 0;
  for (;;) {
    now = now_ns();
    if (!cpu_started && now >= t0 + warmup_ns) { cpu_start = cpu_seconds(); wall_start = now; cpu_started = 1; }
    if (cpu_end_wall == 0 && now >= end_ns) { cpu_end = cpu_seconds(); cpu_end_wall = now; }
    /* Sweep: every idle connection whose next request is due sends it (a waiting one sends on
     * its answer); epoll_pwait2 wakes the loop at the earliest due time still ahead. */
    int64_t next_due = INT64_MAX;
    int busy = 0;
    for (int c = 0; c < connections; c++) {
      conn_t *x = &conns[c];
      if (!x->busy) {
        int64_t d = due_of(c, x->k_next);
        if (d >= end_ns) continue;
        if (d > now) {
          if (d < next_due) next_due = d;
          continue;
        }
        send_request(c);
      }
      busy += x->busy;
    }
    if (next_due == INT64_MAX) {
      /* The schedule is over: wait for the answers still missing, at most DRAIN_NS. */
      if (busy == 0 || now >= end_ns + DRAIN_NS) break;
      next_due = end_ns + DRAIN_NS;
    }
    /* Sleep until the earliest due time still ahead, or until an answer arrives. */
    int64_t wait_ns = next_due - now_ns();
    if (wait_ns < 0) wait_ns = 0;
    struct timespec timeout = {.tv_sec = wait_ns / 1000000000LL, .tv_nsec = wait_ns % 1000000000LL};
    int n = epoll_pwait2(epfd, evs, 256, &timeout, NULL);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_pwait2");
    }
    for (int i = 0; i < n; i++) {
      uint32_t id = evs[i].data.u32;
      on_readable((int)id);
    }
  }
  /* Account for every request due in the window: in flight still, or never sent. */
  for (int c = 0; c < connections; c++) {
    conn_t *x = &conns[c];
    if (x->busy && x->measured) timeouts++;
    for (int64_t k = 0;; k++) {
      int64_t d = due_of(c, k);
      if (d >= end_ns) break;
      if (d < t0 + warmup_ns) continue;
      due_window++;
      if (k >= x->k_next) unsent++;
    }
  }
  if (cpu_end_wall == 0) { cpu_end = cpu_seconds(); cpu_end_wall = now_ns(); }
  /* The generator's CPU over the measured window alone (not the drain after it). */
  double cpu_share = cpu_started && cpu_end_wall > wall_start ? (cpu_end - cpu_start) / ((double)(cpu_end_wall - wall_start) / 1e9) : 0;
  qsort(lat_us, (size_t)lat_count, sizeof *lat_us, cmp_u32);
  /* Requests sent more than 1 ms after they were due (their connection was waiting). */
  printf(
      "{\"rate\":%.1f,\"connections\":%d,\"seconds\":%.3f,\"due\":%lld,\"sent\":%lld,\"answered\":%lld,\"non2xx\":%lld,\"errors\":%lld,"
      "\"timeouts\":%lld,\"unsent\":%lld,\"reconnects\":%lld,\"p50Ms\":%.3f,\"p90Ms\":%.3f,\"p99Ms\":%.3f,\"p999Ms\":%.3f,\"maxMs\":%.3f,\"generatorCpuShare\":%.4f}\n",
      rate, connections, seconds, (long long)due_window, (long long)sent_measured, (long long)done_measured, (long long)non2xx, (long long)errors,
      (long long)timeouts, (long long)unsent, (long long)reconnects, pct(0.5), pct(0.9), pct(0.99), pct(0.999), max_ns / 1e6, cpu_share);
  return 0;
}
