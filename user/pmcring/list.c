// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring list`: the sampling events `record -e` takes (perf list,
 * pmccontrol -L), each tried with perf_event_open(2) on this machine, the
 * way the module will create it: user mode only, on the calling thread,
 * never enabled.  A VM without a PMU shows the hardware events as not
 * counted here.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "cmd.h"
#include "record/opts.h"
#include "record/pfm.h"

/* 0 if this machine can count @ev, else a negative errno. */
static int event_probe(const struct rec_event *ev)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = ev->type;
	attr.config = ev->config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

static const char *event_why(int err)
{
	switch (err) {
	case 0:
		return "yes";
	case -ENOENT:
	case -EOPNOTSUPP:
	case -ENODEV:
		return "no (not on this machine: no PMU, or a VM without one)";
	case -EACCES:
	case -EPERM:
		return "unknown (perf_event_paranoid or a security policy "
		       "forbids trying)";
	default:
		return strerror(-err);
	}
}

#define PMU_SYSFS "/sys/bus/event_source/devices"

/* The first line of @path into @buf (newline cut); -1 if unreadable. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/*
 * The named events the kernel publishes for the CPU's PMU, which takes
 * PERF_TYPE_RAW events: on x86 the one of that sysfs type (cpu), on arm64
 * the one with a cpu_cycles event (armv8_pmuv3, whose type is dynamic).
 * Each event whose encoding is a plain "event=0xNN" is what -e rNN counts.
 * Returns how many were listed.
 */
static int sysfs_event_list(FILE *out)
{
	struct dirent **ev;
	char path[1024], buf[128];
	struct dirent *d;
	int n = 0, i, nev;
	DIR *dir;

	dir = opendir(PMU_SYSFS);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PMU_SYSFS "/%s/type", d->d_name);
		if (read_line(path, buf, sizeof(buf)))
			continue;
		if (strtoul(buf, NULL, 0) != PERF_TYPE_RAW) {
			snprintf(path, sizeof(path),
				 PMU_SYSFS "/%s/events/cpu_cycles", d->d_name);
			if (access(path, R_OK))
				continue;
		}
		snprintf(path, sizeof(path), PMU_SYSFS "/%s/events", d->d_name);
		nev = scandir(path, &ev, NULL, name_cmp);
		for (i = 0; i < nev; i++) {
			char *end;
			unsigned long code;

			snprintf(path, sizeof(path), PMU_SYSFS "/%s/events/%s",
				 d->d_name, ev[i]->d_name);
			if (ev[i]->d_name[0] != '.' &&
			    !read_line(path, buf, sizeof(buf)) &&
			    !strncmp(buf, "event=", 6)) {
				code = strtoul(buf + 6, &end, 0);
				if (!*end) {
					fprintf(out, "  %s/%s/  -e r%lx\n",
						d->d_name, ev[i]->d_name, code);
					n++;
				}
			}
			free(ev[i]);
		}
		if (nev > 0)
			free(ev);
	}
	closedir(dir);
	return n;
}

int cmd_list(int argc, char **argv)
{
	struct rec_event ev;
	unsigned int i;
	int n;

	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			printf("usage: pmcring list\n\nThe events of "
			       "`pmcring record -e`, and whether this machine "
			       "counts them.\n");
			return 0;
		}
		fprintf(stderr, "pmcring list: no arguments (see --help)\n");
		return 2;
	}
	printf("%-20s %-9s %s\n", "event", "kind", "counted here");
	for (i = 0; rec_event_at(i, &ev) == 0; i++)
		printf("%-20s %-9s %s\n", ev.name,
		       ev.type == PERF_TYPE_HARDWARE ? "hardware" : "software",
		       event_why(event_probe(&ev)));
	printf("\nnone                 -         no sampling (-e none)\n");
	printf("rHEX                 raw       a raw PMU event code, as "
	       "perf's -e rHEX\n");
	printf("\nModifiers: EVENT:u counts user mode only, EVENT:k kernel "
	       "mode only.\n");
	printf("\nPMU events the kernel names (%s/*/events of the CPU's "
	       "PMU; -e rHEX):\n", PMU_SYSFS);
	if (!sysfs_event_list(stdout))
		printf("  (none: no CPU PMU here, e.g. a VM without one)\n");
	printf("\nPMU events of this machine (libpfm4; -e PMU::EVENT[:UMASK]"
	       "[:u|:k]):\n");
	n = pfm_event_list(stdout);
	if (n == -ENOENT)
		printf("  (none: built without libpfm4)\n");
	else if (n == 0)
		printf("  (none: libpfm4 finds no PMU here, e.g. a VM "
		       "without one)\n");
	return 0;
}
