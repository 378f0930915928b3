/* launch.c - es_mpi_pick: which of the collectors built (libescollect-NAME.so, one per MPI) serves a program, from the MPI library the dynamic loader would give it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/collectors.h"

extern char **environ;

/*
 * Why the loader decides.  Which MPI a program runs on is which libmpi*.so
 * the dynamic loader maps into it, and only the loader knows that for sure:
 * the program may reach MPI through a library of its own (LAMMPS through
 * liblammps.so), through RUNPATH, LD_LIBRARY_PATH or ld.so.cache.  So we
 * ask it, as ldd does, but without ldd's risk: the program's own PT_INTERP
 * is run with --list, which maps and lists and never runs the program's
 * code.  A collector's MPI is the libmpi* it was linked with (its
 * DT_NEEDED), read from the file; a program and a collector match when the
 * program loads that very soname.
 */

#define MAX_COLLECTORS 8
#define MAX_LOADED 16

struct collector {
	char name[32];      /* NAME in libescollect-NAME.so: the MPI it serves */
	char path[PATH_MAX];
	char mpi[64];       /* the soname of that MPI's library */
};

static int say(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}

/* The whole of a small file's first LEN bytes from OFF; 0 or -errno. */
static int read_at(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -ENOEXEC;
}

/* A 64-bit ELF's header and program headers; 0, -ENOEXEC (not one) or -errno. */
static int elf_headers(int fd, Elf64_Ehdr *eh, Elf64_Phdr **ph)
{
	int rc = read_at(fd, eh, sizeof(*eh), 0);
	if (rc)
		return rc;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 || eh->e_phnum > 256)
		return -ENOEXEC;
	*ph = calloc(eh->e_phnum, sizeof(Elf64_Phdr));
	if (!*ph)
		return -ENOMEM;
	if ((rc = read_at(fd, *ph, eh->e_phnum * sizeof(Elf64_Phdr), (off_t)eh->e_phoff))) {
		free(*ph);
		*ph = NULL;
	}
	return rc;
}

/* Where a virtual address lies in the file, by the segment that loads it. */
static off_t elf_offset(const Elf64_Ehdr *eh, const Elf64_Phdr *ph, uint64_t vaddr)
{
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr && vaddr < ph[i].p_vaddr + ph[i].p_filesz)
			return (off_t)(ph[i].p_offset + (vaddr - ph[i].p_vaddr));
	return -1;
}

/* The first DT_NEEDED of PATH whose name begins with "libmpi": the MPI a
 * collector was linked with.  0, -ENOENT (none) or -errno. */
static int elf_needed_mpi(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
	if (fd < 0)
		return -errno;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL, *dyn = NULL;
	Elf64_Dyn *d = NULL;
	if ((rc = elf_headers(fd, &eh, &ph)))
		goto out;
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = &ph[i];
	rc = -ENOENT;
	if (!dyn || dyn->p_filesz > (1 << 20) || !(d = malloc(dyn->p_filesz)) ||
	    read_at(fd, d, dyn->p_filesz, (off_t)dyn->p_offset))
		goto out;
	size_t n = dyn->p_filesz / sizeof(*d);
	off_t strtab = -1;
	for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++)
		if (d[i].d_tag == DT_STRTAB)
			strtab = elf_offset(&eh, ph, d[i].d_un.d_ptr);
	for (size_t i = 0; strtab >= 0 && i < n && d[i].d_tag != DT_NULL; i++) {
		char name[64] = "";
		if (d[i].d_tag != DT_NEEDED ||
		    pread(fd, name, sizeof(name) - 1, strtab + (off_t)d[i].d_un.d_val) <= 0)
			continue;
		if (!strncmp(name, "libmpi", 6)) {
			snprintf(out, len, "%s", name);
			rc = 0;
			break;
		}
	}
out:
	free(d);
	free(ph);
	close(fd);
	return rc;
}

/* Every libescollect-NAME.so of LIBDIR with the MPI it serves, by name. */
static int find_collectors(const char *libdir, struct collector *c, int max)
{
	DIR *dir = opendir(libdir);
	if (!dir)
		return -errno;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(dir)) && n < max) {
		size_t len = strlen(de->d_name);
		if (strncmp(de->d_name, "libescollect-", 13) || len <= 16 || strcmp(de->d_name + len - 3, ".so") ||
		    len - 16 >= sizeof(c[n].name))
			continue;
		snprintf(c[n].name, sizeof(c[n].name), "%.*s", (int)(len - 16), de->d_name + 13);
		snprintf(c[n].path, sizeof(c[n].path), "%s/%s", libdir, de->d_name);
		if (elf_needed_mpi(c[n].path, c[n].mpi, sizeof(c[n].mpi)) == 0)
			n++;
	}
	closedir(dir);
	for (int i = 1; i < n; i++) /* sorted: the messages read the same every time */
		for (int j = i; j > 0 && strcmp(c[j - 1].name, c[j].name) > 0; j--) {
			struct collector t = c[j];
			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	return n;
}

/* PROG as execvp would find it: itself when it has a slash, else along PATH. */
static int find_program(const char *prog, char *out, size_t len)
{
	if (strchr(prog, '/')) {
		snprintf(out, len, "%s", prog);
		return access(out, X_OK) ? -errno : 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(out, len, "%.*s%s%s", (int)n, p, n ? "/" : "", prog);
		struct stat st;
		if (!stat(out, &st) && S_ISREG(st.st_mode) && !access(out, X_OK))
			return 0;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}

/* The loader a dynamically linked program names (PT_INTERP); -ENOEXEC for
 * a file that is not a 64-bit ELF program, -ENOENT for a static one. */
static int program_interp(const char *prog, char *out, size_t len)
{
	int fd = open(prog, O_RDONLY | O_CLOEXEC), rc;
	if (fd < 0)
		return -errno;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	if (!(rc = elf_headers(fd, &eh, &ph))) {
		rc = -ENOENT;
		for (int i = 0; i < eh.e_phnum; i++)
			if (ph[i].p_type == PT_INTERP && ph[i].p_filesz > 1 && ph[i].p_filesz < len &&
			    !read_at(fd, out, ph[i].p_filesz, (off_t)ph[i].p_offset)) {
				out[ph[i].p_filesz - 1] = 0;
				rc = 0;
			}
	}
	free(ph);
	close(fd);
	return rc;
}

/* The libmpi* sonames the loader maps for PROG (INTERP --list PROG): their
 * count, or -errno.  The loader lists and exits; PROG's code never runs. */
static int loaded_mpi(const char *interp, const char *prog, char names[][64], int max)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[] = { (char *)interp, "--list", (char *)prog, NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, interp, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		return -rc;
	}
	FILE *f = fdopen(fds[0], "r");
	int n = 0;
	char line[PATH_MAX + 128], name[64];
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " %63s", name) == 1 && !strncmp(name, "libmpi", 6) && n < max)
			snprintf(names[n++], 64, "%s", name);
	f ? fclose(f) : close(fds[0]);
	int st = 0;
	pid_t w;
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	return w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? n : -ENOEXEC;
}

static void list_collectors(const struct collector *c, int n, char *out, size_t len)
{
	size_t at = 0;
	out[0] = 0;
	for (int i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(out + at, len - at, "%s%s (%s)", i ? ", " : "", c[i].name, c[i].mpi);
}

int es_mpi_pick(const char *libdir, const char *prog, const char *want, char *out, size_t len, char *err,
		size_t errlen)
{
	struct collector c[MAX_COLLECTORS];
	char have[512], path[PATH_MAX], interp[PATH_MAX], mpi[MAX_LOADED][64];
	int n = find_collectors(libdir, c, MAX_COLLECTORS), rc;
	if (n <= 0)
		return say(err, errlen, -ENOENT, "no collector in %s (libescollect-MPI.so, built for each MPI "
			   "found when EventSpace was built)", libdir);
	list_collectors(c, n, have, sizeof(have));
	if (want) {
		for (int i = 0; i < n; i++)
			if (!strcmp(c[i].name, want))
				return snprintf(out, len, "%s", c[i].path) >= (int)len ? -ENAMETOOLONG : 0;
		return say(err, errlen, -ENOENT, "--mpi %s: expected one of the MPIs esrun has a collector for: %s",
			   want, have);
	}
	if ((rc = find_program(prog, path, sizeof(path))))
		return say(err, errlen, rc, "%s: %s", prog, rc == -ENOENT ? "not found" : strerror(-rc));
	if ((rc = program_interp(path, interp, sizeof(interp))) == -ENOENT)
		return say(err, errlen, -ENOEXEC, "%s is statically linked: a collector preloaded cannot reach "
			   "its MPI calls (link it dynamically)", prog);
	if (rc)
		return say(err, errlen, -ENOEXEC, "%s is not a dynamically linked 64-bit program (a script?), so "
			   "esrun cannot tell which MPI it runs on: name it with --mpi (%s)", prog, have);
	int m = loaded_mpi(interp, path, mpi, MAX_LOADED);
	if (m < 0)
		return say(err, errlen, m, "%s: its loader (%s --list) could not say which libraries it "
			   "loads: name its MPI with --mpi (%s)", prog, interp, have);
	int pick = -1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			if (!strcmp(c[i].mpi, mpi[j]) && pick != i) {
				if (pick >= 0)
					return say(err, errlen, -EINVAL, "%s loads the libraries of two MPIs (%s and "
						   "%s): name the one it runs on with --mpi", prog, c[pick].mpi, c[i].mpi);
				pick = i;
			}
	if (pick >= 0)
		return snprintf(out, len, "%s", c[pick].path) >= (int)len ? -ENAMETOOLONG : 0;
	if (m == 0)
		return say(err, errlen, -ESRCH, "%s loads no MPI library (none named libmpi*): nothing for "
			   "esrun to watch; if it opens MPI itself later, name it with --mpi (%s)", prog, have);
	return say(err, errlen, -ENOTSUP, "%s runs on %s, an MPI none of esrun's collectors was built "
		   "for (they serve: %s)", prog, mpi[0], have);
}
