/* SPDX-License-Identifier: MIT */
/* The shared segment's region allocator and attach checks: regions land at
 * distinct, aligned, non-overlapping offsets; the same declarations give
 * the same layout (the library's own segment included, for several rank
 * counts); bad declarations are refused; a rank whose layout differs from
 * rank 0's, or that finds a tampered header, is refused at attach with an
 * error naming what differs; a good second rank sees rank 0's data and
 * pid. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll/shm.h"
#include "harness.h"
#include "p2p/p2p.h"
#include "shm/shm.h"

/* ---- stderr capture (the library logs with write(2)) --------------------- */

static char logbuf[4096];
static int saved_stderr = -1;

static void capture_begin(void)
{
    int m = memfd_create("ferry-test-log", MFD_CLOEXEC);
    saved_stderr = dup(STDERR_FILENO);
    dup2(m, STDERR_FILENO);
    close(m);
}

/* What was logged since capture_begin (also echoed as diagnostics). */
static const char *capture_end(void)
{
    off_t n = lseek(STDERR_FILENO, 0, SEEK_CUR);
    if (n < 0 || n >= (off_t)sizeof(logbuf))
        n = sizeof(logbuf) - 1;
    ssize_t got = pread(STDERR_FILENO, logbuf, (size_t)n, 0);
    logbuf[got > 0 ? got : 0] = '\0';
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    char copy[sizeof(logbuf)];
    memcpy(copy, logbuf, sizeof(copy));
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
        tap_diag("logged: %s", line);
    return logbuf;
}

/* ---- layouts ------------------------------------------------------------- */

static uint64_t times_of(const struct fy_shm_layout *l,
                         const struct fy_shm_region *r)
{
    return r->per == FY_SHM_PER_JOB    ? 1
           : r->per == FY_SHM_PER_RANK ? l->nranks
                                       : (uint64_t)l->nranks * l->nranks;
}

/* Every region aligned, after the header page, inside the total, sized
 * as declared, and no two overlapping. Returns the number of violations
 * (each reported as a diagnostic). */
static int check_placement(const struct fy_shm_layout *l)
{
    int bad = 0;
    if (l->total % FY_SHM_PAGE) {
        tap_diag("total %llu is not a page multiple",
                 (unsigned long long)l->total);
        bad++;
    }
    for (uint32_t i = 0; i < l->nregions; i++) {
        const struct fy_shm_region *r = &l->region[i];
        if (r->off % r->align || r->off < FY_SHM_PAGE ||
            r->off + r->len > l->total ||
            r->len != r->elem * r->count * times_of(l, r)) {
            tap_diag("region '%s' at %llu (+%llu, align %u) misplaced", r->name,
                     (unsigned long long)r->off, (unsigned long long)r->len,
                     r->align);
            bad++;
        }
        for (uint32_t j = 0; j < i; j++) {
            const struct fy_shm_region *o = &l->region[j];
            if (r->off < o->off + o->len && o->off < r->off + r->len) {
                tap_diag("regions '%s' and '%s' overlap", r->name, o->name);
                bad++;
            }
        }
    }
    return bad;
}

/* A layout with every kind of region, for 'nranks' ranks and 'count'
 * elements in the per-rank one. */
static int toy_layout(struct fy_shm_layout *l, uint32_t nranks, uint64_t count)
{
    fy_shm_layout_init(l, nranks);
    int rc;
    if ((rc = fy_shm_region_add(l, "job", FY_SHM_PER_JOB, 100, 1, 64, 1)) < 0 ||
        (rc = fy_shm_region_add(l, "rank", FY_SHM_PER_RANK, 64, count, 64, 2)) <
            0 ||
        (rc = fy_shm_region_add(l, "pair", FY_SHM_PER_PAIR, 64, 2, FY_SHM_PAGE,
                                3)) < 0 ||
        (rc = fy_shm_region_add(l, "odd", FY_SHM_PER_RANK, 24, 1, 128, 4)) <
            0 ||
        (rc = fy_shm_region_add(l, "huge", FY_SHM_PER_RANK, 1000, 1,
                                FY_SHM_ALIGN_MAX, 5)) < 0)
        return rc;
    return fy_shm_layout_compute(l);
}

static void test_allocator(void)
{
    struct fy_shm_layout a, b;
    TAP_EQ_INT(toy_layout(&a, 5, 3), 0, "toy layout computed");
    TAP_EQ_INT(a.nregions, 6, "shm's own region and five declared");
    TAP_EQ_INT(check_placement(&a), 0,
               "toy regions aligned, in bounds, sized, not overlapping");
    const struct fy_shm_region *pair = fy_shm_layout_find(&a, "pair");
    TAP_OK(pair && pair->len == 5 * 5 * 2 * 64, "per-pair region is P*P");
    TAP_OK(fy_shm_layout_find(&a, "pids") != NULL, "shm's pids region");
    TAP_OK(fy_shm_layout_find(&a, "nope") == NULL, "unknown name: NULL");
    TAP_EQ_INT(toy_layout(&b, 5, 3), 0, "toy layout again");
    TAP_OK(!memcmp(&a, &b, sizeof(a)), "same declarations, same layout");
    TAP_EQ_INT(toy_layout(&b, 6, 3), 0, "toy layout for 6 ranks");
    TAP_OK(memcmp(&a, &b, sizeof(a)) != 0, "other rank count, other layout");

    /* The library's own segment at its defaults. */
    static const uint32_t ranks[] = {1, 2, 3, 16, 128};
    for (size_t i = 0; i < FY_ARRAY_LEN(ranks); i++) {
        struct fy_p2p_seg_params p;
        TAP_EQ_INT(fy_p2p_seg_params(ranks[i], &p), 0,
                   "segment parameters for %u ranks", ranks[i]);
        TAP_OK(!fy_p2p_seg_layout(&p, fy_coll_shm_declare, &a) &&
                   !fy_p2p_seg_layout(&p, fy_coll_shm_declare, &b) &&
                   !memcmp(&a, &b, sizeof(a)),
               "%u ranks: the segment's layout is reproducible", ranks[i]);
        TAP_EQ_INT(check_placement(&a), 0, "%u ranks: %u regions well placed",
                   ranks[i], a.nregions);
    }
}

static void test_refused_declarations(void)
{
    struct fy_shm_layout l;
    fy_shm_layout_init(&l, 4);
    capture_begin();
    int dup_rc = fy_shm_region_add(&l, "pids", FY_SHM_PER_JOB, 8, 1, 64, 0);
    int small = fy_shm_region_add(&l, "a", FY_SHM_PER_JOB, 8, 1, 32, 0);
    int npot = fy_shm_region_add(&l, "b", FY_SHM_PER_JOB, 8, 1, 192, 0);
    int big = fy_shm_region_add(&l, "c", FY_SHM_PER_JOB, 8, 1,
                                FY_SHM_ALIGN_MAX * 2, 0);
    int empty = fy_shm_region_add(&l, "", FY_SHM_PER_JOB, 8, 1, 64, 0);
    int longn =
        fy_shm_region_add(&l, "sixteen-chars-xx", FY_SHM_PER_JOB, 8, 1, 64, 0);
    int per = fy_shm_region_add(&l, "d", (enum fy_shm_per)7, 8, 1, 64, 0);
    capture_end();
    TAP_EQ_INT(dup_rc, -EINVAL, "a name already taken is refused");
    TAP_EQ_INT(small, -EINVAL, "alignment below a line is refused");
    TAP_EQ_INT(npot, -EINVAL, "alignment not a power of two is refused");
    TAP_EQ_INT(big, -EINVAL, "alignment above the maximum is refused");
    TAP_EQ_INT(empty, -EINVAL, "an empty name is refused");
    TAP_EQ_INT(longn, -EINVAL, "a name of %d characters is refused",
               FY_SHM_NAME_LEN);
    TAP_EQ_INT(per, -EINVAL, "an unknown multiplier is refused");
    TAP_EQ_INT(l.nregions, 1, "refused regions take no slot");

    char name[8];
    int rc = 0;
    for (int i = 1; i < FY_SHM_REGIONS_MAX && rc >= 0; i++) {
        snprintf(name, sizeof(name), "r%d", i);
        rc = fy_shm_region_add(&l, name, FY_SHM_PER_RANK, 64, 1, 64, 0);
    }
    TAP_EQ_INT(rc, FY_SHM_REGIONS_MAX - 1, "%d regions fit",
               FY_SHM_REGIONS_MAX);
    capture_begin();
    rc = fy_shm_region_add(&l, "one-more", FY_SHM_PER_RANK, 64, 1, 64, 0);
    capture_end();
    TAP_EQ_INT(rc, -E2BIG, "region %d is refused", FY_SHM_REGIONS_MAX + 1);

    fy_shm_layout_init(&l, 1u << 20);
    fy_shm_region_add(&l, "vast", FY_SHM_PER_PAIR, 1ull << 30, 1 << 20, 64, 0);
    capture_begin();
    rc = fy_shm_layout_compute(&l);
    const char *log = capture_end();
    TAP_EQ_INT(rc, -EOVERFLOW, "a region beyond 64 bits is refused");
    TAP_OK(strstr(log, "'vast'") != NULL, "... naming it");
}

/* ---- attach -------------------------------------------------------------- */

/* Attach as local rank 1 with layout l to the segment behind fd (a dup is
 * used: attach keeps the fd only on success). Returns attach's code and
 * leaves what it logged in logbuf. */
static int attach_as_rank1(int fd, const struct fy_shm_layout *l)
{
    int d = dup(fd);
    capture_begin();
    int rc = fy_shm_attach(d, 1, l);
    capture_end();
    if (rc)
        close(d);
    return rc;
}

static void test_attach(void)
{
    int fd = memfd_create("ferry-test-shm-layout", MFD_CLOEXEC);
    struct fy_shm_layout lay, other;
    TAP_EQ_INT(toy_layout(&lay, 2, 3), 0, "toy layout for 2 ranks");
    TAP_EQ_INT(fy_shm_attach(dup(fd), 0, &lay), 0, "rank 0 creates it");
    uint64_t len = 0;
    uint8_t *rank_region = fy_shm_region_ptr("rank", &len);
    const struct fy_shm_region *r = fy_shm_layout_find(&lay, "rank");
    TAP_OK(rank_region == fy_shm.base + r->off && len == r->len,
           "region pointer from the private layout");
    TAP_EQ_INT(fy_shm.pid_shared[0], getpid(), "rank 0 published its pid");
    memcpy(rank_region + 64, "hello", 6); /* rank 1's first element */
    uint8_t *base0 = fy_shm.base;
    struct fy_shm_hdr *h = fy_shm.hdr;
    struct fy_shm_hdr good = *h;

    /* Another rank computed another layout (other FERRY_* settings). */
    TAP_EQ_INT(toy_layout(&other, 2, 4), 0, "a layout with 4 per rank");
    TAP_EQ_INT(attach_as_rank1(fd, &other), -EPROTO,
               "a rank with other settings is refused");
    TAP_OK(strstr(logbuf, "shared region 'rank' is 3 x 64 B") &&
               strstr(logbuf, "FERRY_*"),
           "... naming the region and both sizes");

    /* Tampered headers, one field at a time. */
    static const struct {
        const char *what, *expect;
    } cases[] = {
        {"magic", "magic"},
        {"version", "version"},
        {"rank count", "laid out for 3 ranks"},
        {"region size", "shared region 'pair' is 2 x 4096 B"},
        {"region layout signature", "different Ferry builds"},
        {"region name", "different Ferry builds"},
        {"region count", "has 7 regions, 6 here"},
        {"total", "bytes for rank 0"},
    };
    for (size_t i = 0; i < FY_ARRAY_LEN(cases); i++) {
        struct fy_shm_region *pair = &h->lay.region[3];
        switch (i) {
        case 0:
            h->magic ^= 1;
            break;
        case 1:
            h->version ^= 0x100;
            break;
        case 2:
            h->lay.nranks = 3;
            break;
        case 3:
            pair->elem = 4096;
            break;
        case 4:
            pair->sig ^= 1;
            break;
        case 5:
            pair->name[0] = 'q';
            break;
        case 6:
            h->lay.nregions++;
            break;
        default:
            h->lay.total += FY_SHM_PAGE;
            break;
        }
        TAP_EQ_INT(attach_as_rank1(fd, &lay), -EPROTO, "tampered %s: refused",
                   cases[i].what);
        TAP_OK(strstr(logbuf, cases[i].expect) != NULL,
               "... with an error saying \"%s\"", cases[i].expect);
        *h = good;
    }
    TAP_OK(fy_shm.base == base0, "refused attaches left rank 0's view alone");

    /* A good rank 1, in its own process. */
    fflush(stdout);
    pid_t kid = fork();
    if (kid == 0) {
        fy_shm_detach(); /* this process is rank 1 only */
        int st = 0;
        if (fy_shm_attach(fd, 1, &lay))
            st |= 1;
        else if (strcmp((char *)fy_shm_region_ptr("rank", NULL) + 64, "hello"))
            st |= 2;
        else if (fy_shm_pids_snapshot() || fy_shm.pid[0] != getppid() ||
                 fy_shm.pid[1] != getpid())
            st |= 4;
        _exit(st);
    }
    int st = -1;
    waitpid(kid, &st, 0);
    TAP_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "rank 1 attaches, sees rank 0's data and both pids (status %d)",
           WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    fy_shm_detach();
    close(fd);
}

int main(void)
{
    alarm(60);
    if (fy_env_load())
        return 1;
    test_allocator();
    test_refused_declarations();
    test_attach();
    return tap_done();
}
