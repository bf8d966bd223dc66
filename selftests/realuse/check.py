#!/usr/bin/env python3
"""Independent readers of pmcring record's output, written from the
format facts (FreeBSD's sys/sys/pmclog.h and pmclog_read(), gator's
barman storage, LDMS blob_stream_writer and ldms-csv-from-blobs' rules,
as Documentation/formats.rst cites them), not from pmcring's code: a
second opinion on what `pmcring dump` accepts.

usage: check.py RESULTDIR...   (each a scenario directory from guest.sh)
Prints one verdict line per scenario, then the problems found; exit 1 if
any scenario failed.  V=1 also prints the record types seen.
"""
import json
import os
import re
import struct
import sys

MAGIC = 0xEE
FIXED = {1: 16, 2: 16, 3: 112, 5: 40, 7: 24, 8: 40, 10: 32, 11: 24, 12: 24,
         13: 24, 15: 40, 17: 96, 18: 52, 19: 24, 20: 44}
PATHREC = {6: 24, 9: 40, 14: 32}     # fixed part before the path
NAMES = {1: 'CLOSELOG', 2: 'DROPNOTIFY', 3: 'INITIALIZE', 5: 'PMCALLOCATE',
         6: 'PMCATTACH', 7: 'PMCDETACH', 8: 'PROCCSW', 9: 'PROCEXEC',
         10: 'PROCEXIT', 11: 'PROCFORK', 12: 'SYSEXIT', 13: 'USERDATA',
         14: 'MAP_IN', 15: 'MAP_OUT', 16: 'CALLCHAIN', 17: 'PMCALLOCATEDYN',
         18: 'THR_CREATE', 19: 'THR_EXIT', 20: 'PROC_CREATE',
         32: 'GENERATED', 33: 'PERIOD'}
MAXREC = 4128
FREEBSD_PATH_MAX = 1024


def u32(b, o):
    return struct.unpack_from('<I', b, o)[0]


def u64(b, o):
    return struct.unpack_from('<Q', b, o)[0]


def cstr(b, o, n):
    s = b[o:o + n]
    i = s.find(b'\0')
    return None if i < 0 else s[:i]


class Problems:
    def __init__(self):
        self.errs = []
        self.notes = []

    def err(self, msg):
        if len(self.errs) < 40:
            self.errs.append(msg)
        elif len(self.errs) == 40:
            self.errs.append('... more')

    def note(self, msg):
        self.notes.append(msg)


def parse_record(b, off, P, where, ring=False):
    """One pmclog record at b[off:], FreeBSD's parser rules; returns
    (dict, length) or (None, 0) for a cut-short tail, raises on error."""
    if len(b) - off < 16:
        return None, 0
    h = u32(b, off)
    magic, typ, ln = h >> 24, (h >> 16) & 0xff, h & 0xffff
    if magic != MAGIC:
        raise ValueError('%s@%d: bad magic 0x%08x (hole or garbage)' % (where, off, h))
    if ln == 0:
        raise ValueError('%s@%d: zero length' % (where, off))
    if ln % 4:
        raise ValueError('%s@%d: length %d not a multiple of 4' % (where, off, ln))
    if ln > MAXREC:
        raise ValueError('%s@%d: length %d > 4128' % (where, off, ln))
    if typ not in NAMES:
        raise ValueError('%s@%d: unknown type %d' % (where, off, typ))
    if len(b) - off < ln:
        return None, 0
    r = b[off:off + ln]
    rec = {'type': typ, 'name': NAMES[typ], 'len': ln, 'off': off,
           'spare': u32(r, 4), 'ts': u64(r, 8)}
    if rec['spare'] != 0:
        P.err('%s@%d %s: pl_spare 0x%x != 0' % (where, off, NAMES[typ], rec['spare']))
    if typ in FIXED and ln != FIXED[typ]:
        raise ValueError('%s@%d %s: length %d, FreeBSD size %d' % (where, off, NAMES[typ], ln, FIXED[typ]))
    if typ in PATHREC:
        base = PATHREC[typ]
        if ln < base + 1:
            raise ValueError('%s@%d %s: no path' % (where, off, NAMES[typ]))
        if ln - base > FREEBSD_PATH_MAX:
            raise ValueError('%s@%d %s: path area %d > 1024' % (where, off, NAMES[typ], ln - base))
        p = cstr(r, base, ln - base)
        if p is None:
            raise ValueError('%s@%d %s: path not NUL-terminated' % (where, off, NAMES[typ]))
        want = (base + len(p) + 1 + 3) & ~3
        if ln != want:
            P.err('%s@%d %s: length %d for a %d-byte path (want %d)' % (where, off, NAMES[typ], ln, len(p), want))
        rec['path'] = p.decode('latin-1')
        if any(r[base + len(p):ln]):
            P.err('%s@%d %s: path padding not zero' % (where, off, NAMES[typ]))
    if typ == 16:
        if ln < 32 or (ln - 32) % 8:
            raise ValueError('%s@%d CALLCHAIN: length %d' % (where, off, ln))
        n = (ln - 32) // 8
        if n > 512:
            raise ValueError('%s@%d CALLCHAIN: %d pcs' % (where, off, n))
        rec.update(pid=u32(r, 16), tid=u32(r, 20), pmcid=u32(r, 24),
                   cpu=u32(r, 28) >> 16, ccflags=u32(r, 28) & 0xffff,
                   pcs=[u64(r, 32 + 8 * i) for i in range(n)])
    elif typ == 3:
        rec.update(version=u32(r, 16), cputype=u32(r, 20), tsc_freq=u64(r, 24),
                   sec=u64(r, 32), nsec=u64(r, 40), cpuid=cstr(r, 48, 64))
    elif typ == 5:
        rec.update(pmcid=u32(r, 16), event=u32(r, 20), flags=u32(r, 24), pad=u32(r, 28), rate=u64(r, 32))
    elif typ == 17:
        rec.update(pmcid=u32(r, 16), event=u32(r, 20), flags=u32(r, 24), pad=u32(r, 28), evname=cstr(r, 32, 64))
        if rec['evname'] is None:
            P.err('%s@%d PMCALLOCATEDYN: name not NUL-terminated' % (where, off))
        if rec['pad']:
            P.err('%s@%d PMCALLOCATEDYN: pad %x' % (where, off, rec['pad']))
    elif typ in (6, 7):
        rec.update(pmcid=u32(r, 16), pid=u32(r, 20))
    elif typ == 8:
        rec.update(value=u64(r, 16), pmcid=u32(r, 24), pid=u32(r, 28), tid=u32(r, 32), pad=u32(r, 36))
        if rec['pad']:
            P.err('%s@%d PROCCSW: pad %x' % (where, off, rec['pad']))
    elif typ == 9:
        rec.update(pid=u32(r, 16), pmcid=u32(r, 20), base=u64(r, 24), dyn=u64(r, 32))
    elif typ == 10:
        rec.update(pmcid=u32(r, 16), pid=u32(r, 20), value=u64(r, 24))
    elif typ == 11:
        rec.update(oldpid=u32(r, 16), newpid=u32(r, 20))
    elif typ in (12, 13, 19):
        rec.update(val=u32(r, 16), pad=u32(r, 20))
        if rec['pad']:
            P.err('%s@%d %s: pad %x' % (where, off, NAMES[typ], rec['pad']))
    elif typ == 14:
        rec.update(pid=u32(r, 16), pad=u32(r, 20), start=u64(r, 24))
        if rec['pad']:
            P.err('%s@%d MAP_IN: pad %x' % (where, off, rec['pad']))
    elif typ == 15:
        rec.update(pid=u32(r, 16), pad=u32(r, 20), start=u64(r, 24), end=u64(r, 32))
        if rec['pad']:
            P.err('%s@%d MAP_OUT: pad %x' % (where, off, rec['pad']))
    elif typ == 18:
        rec.update(tid=u32(r, 16), pid=u32(r, 20), flags=u32(r, 24), pad=u32(r, 28), tdname=cstr(r, 32, 20))
        if rec['pad']:
            P.err('%s@%d THR_CREATE: pad %x' % (where, off, rec['pad']))
        if rec['tdname'] is None:
            P.err('%s@%d THR_CREATE: name not NUL-terminated in 20 bytes' % (where, off))
    elif typ == 20:
        rec.update(pid=u32(r, 16), flags=u32(r, 20), pcomm=cstr(r, 24, 20))
        if rec['pcomm'] is None:
            P.err('%s@%d PROC_CREATE: comm not NUL-terminated in 20 bytes' % (where, off))
    elif typ == 33:
        if ln != 32:
            raise ValueError('%s@%d PERIOD: length %d' % (where, off, ln))
        rec.update(pmcid=u32(r, 16), cpu=u32(r, 20), period=u64(r, 24))
    return rec, ln


# Where user space ends and the kernel begins: x86-64 (4-level paging)
# splits at the canonical hole; arm64 gives user space TTBR0's range, up to
# 2^48 (2^52 with 52-bit VAs), and the kernel TTBR1's, from 0xfff0... on.
# main() sets ARCH from the guest-info.txt that guest.sh writes.
ARCH = 'amd64'


def is_kaddr(a):
    if ARCH == 'arm64':
        return a >= 0xfff0000000000000
    return a >= 0xffff800000000000


def is_uaddr(a):
    if ARCH == 'arm64':
        return 0 < a < 1 << 52
    return 0 < a < 0x0000800000000000


# How long a stop may take (s).  The x86 VM's bound; REALUSE_STOP_BOUND
# raises it where the emulation is slower (run --arch arm64: one TCG
# thread for an arm64 guest, about twice as slow as x86's).
STOP_BOUND = float(os.environ.get('REALUSE_STOP_BOUND', '10'))


class Semantics:
    """Cross-record rules that catch a swapped field: every thread belongs
    to one process in every record type that names both; processes are
    known before their threads' records (command mode); pmcids exist;
    CALLCHAIN's user flag matches its first PC."""

    def __init__(self, P, meta):
        self.P = P
        self.meta = meta
        self.tid2pid = {}
        self.tid_src = {}
        self.pmcids = set()
        self.procs = set()
        self.cpus = {}
        self.types = {}
        self.first_seen_tid = {}
        self.threads_created = set()
        self.ncpu = int(meta.get('ncpu', 2))

    def pair(self, tid, pid, what):
        if tid in self.tid2pid and self.tid2pid[tid] != pid:
            self.P.err('tid %d: pid %d in %s, pid %d in %s' % (tid, pid, what, self.tid2pid[tid], self.tid_src[tid]))
        else:
            self.tid2pid[tid] = pid
            self.tid_src[tid] = what

    def rec(self, r, cpu=None):
        t = r['name']
        self.types[t] = self.types.get(t, 0) + 1
        if t in ('PMCALLOCATEDYN', 'PMCALLOCATE'):
            self.pmcids.add(r['pmcid'])
            # run --arch arm64: the default event is the PMU's cycles
            want = os.environ.get('REALUSE_EVENT')
            ev = r.get('evname')
            if isinstance(ev, bytes):
                ev = ev.decode('utf-8', 'replace')
            if want and t == 'PMCALLOCATEDYN' and ev != want:
                self.P.err('PMCALLOCATEDYN@%s: event %r, expected %r' % (r['off'], ev, want))
        elif t == 'CALLCHAIN':
            if self.pmcids and r['pmcid'] not in self.pmcids:
                self.P.err('CALLCHAIN@%s: pmcid 0x%x not allocated' % (r['off'], r['pmcid']))
            if r['cpu'] >= self.ncpu:
                self.P.err('CALLCHAIN@%s: cpu %d >= %d' % (r['off'], r['cpu'], self.ncpu))
            if r['ccflags'] & ~1:
                self.P.err('CALLCHAIN@%s: flags 0x%x' % (r['off'], r['ccflags']))
            pc0 = r['pcs'][0] if r['pcs'] else 0
            if r['ccflags'] & 1 and not is_uaddr(pc0):
                self.P.err('CALLCHAIN@%s: USERSPACE flag but pc[0]=0x%x' % (r['off'], pc0))
            if not r['ccflags'] & 1 and r['pid'] != 0 and not is_kaddr(pc0):
                self.P.err('CALLCHAIN@%s: kernel sample but pc[0]=0x%x' % (r['off'], pc0))
            if not r['pcs']:
                self.P.err('CALLCHAIN@%s: no pc' % r['off'])
            self.pair(r['tid'], r['pid'], 'CALLCHAIN@%s' % r['off'])
            self.cpus[r['cpu']] = self.cpus.get(r['cpu'], 0) + 1
            self.first_seen_tid.setdefault(r['tid'], r['off'])
        elif t == 'PROCCSW':
            if self.pmcids and r['pmcid'] not in self.pmcids:
                self.P.err('PROCCSW@%s: pmcid 0x%x not allocated' % (r['off'], r['pmcid']))
            self.pair(r['tid'], r['pid'], 'PROCCSW@%s' % r['off'])
            self.first_seen_tid.setdefault(r['tid'], r['off'])
        elif t == 'THR_CREATE':
            self.pair(r['tid'], r['pid'], 'THR_CREATE@%s' % r['off'])
            self.threads_created.add(r['tid'])
        elif t == 'PROC_CREATE':
            self.procs.add(r['pid'])
            self.pair(r['pid'], r['pid'], 'PROC_CREATE@%s' % r['off'])
        elif t == 'PROCFORK':
            if self.meta.get('mode') == 'cmd' and self.procs and r['oldpid'] not in self.procs:
                self.P.err('PROCFORK@%s: oldpid %d not a process of the recording (swapped with newpid %d?)' % (r['off'], r['oldpid'], r['newpid']))
            if r['newpid'] in self.procs:
                self.P.err('PROCFORK@%s: newpid %d already known' % (r['off'], r['newpid']))
            self.procs.add(r['newpid'])
            if r['oldpid'] == r['newpid']:
                self.P.err('PROCFORK@%s: oldpid == newpid' % r['off'])
        elif t == 'PROCEXEC':
            self.procs.add(r['pid'])
            if self.pmcids and r['pmcid'] and r['pmcid'] not in self.pmcids:
                self.P.err('PROCEXEC@%s: pmcid 0x%x not allocated' % (r['off'], r['pmcid']))
            if r['dyn'] and r['dyn'] % 4096:
                self.P.err('PROCEXEC@%s: dyn 0x%x not page aligned' % (r['off'], r['dyn']))
            if r['base'] and r['base'] % 4096:
                self.P.err('PROCEXEC@%s: base 0x%x not page aligned' % (r['off'], r['base']))
            if not r['path'].startswith('/'):
                self.P.err('PROCEXEC@%s: path %r' % (r['off'], r['path']))
        elif t == 'PROCEXIT':
            if self.meta.get('mode') == 'cmd' and self.procs and r['pid'] not in self.procs:
                self.P.err('PROCEXIT@%s: pid %d not a process of the recording' % (r['off'], r['pid']))
            if self.pmcids and r['pmcid'] and r['pmcid'] not in self.pmcids:
                self.P.err('PROCEXIT@%s: pmcid 0x%x (pid %d) not allocated' % (r['off'], r['pmcid'], r['pid']))
        elif t == 'MAP_IN':
            if r['pid'] != 0xffffffff and r['start'] % 4096:
                self.P.err('MAP_IN@%s: start 0x%x' % (r['off'], r['start']))
        elif t == 'MAP_OUT':
            if r['end'] < r['start']:
                self.P.err('MAP_OUT@%s: end < start' % r['off'])

    def finish(self, mode, victim, vtid):
        m = self.meta
        if mode == 'cmd':
            # every thread of the command was created during the recording
            for tid, off in self.first_seen_tid.items():
                pid = self.tid2pid.get(tid)
                if tid != pid and tid not in self.threads_created:
                    self.P.err('thread %d (pid %d) sampled at %s with no THR_CREATE' % (tid, pid, off))
        if mode == 'tid' and vtid:
            others = [t for t in self.first_seen_tid if t != int(vtid)]
            if others:
                self.P.err('-t %s: records of other threads %s' % (vtid, others[:5]))
        if mode == 'cpu':
            want = set()
            for part in re.search(r'-C (\S+)', m['args']).group(1).split(','):
                a, _, b = part.partition('-')
                want.update(range(int(a), int(b or a) + 1))
            bad = {c: n for c, n in self.cpus.items() if c not in want}
            if bad:
                self.P.err('-C %s: samples of CPUs %s' % (sorted(want), bad))
            if not any(c in want for c in self.cpus):
                self.P.note('-C: no sample at all')


def check_pmclog(path, P, meta, killed, periods_path=None):
    b = open(path, 'rb').read()
    S = Semantics(P, meta)
    off = 0
    n = 0
    last_ts = 0
    recs = []
    cut = False
    init = None
    while off < len(b):
        try:
            r, ln = parse_record(b, off, P, os.path.basename(path))
        except ValueError as e:
            P.err(str(e))
            break
        if r is None:
            cut = True
            break
        if n == 0 and r['type'] != 3:
            P.err('first record is %s, not INITIALIZE' % r['name'])
        if r['type'] == 3:
            if n:
                P.err('INITIALIZE at record %d' % n)
            init = r
            if r['version'] >> 24 != 0x0A:
                P.err('INITIALIZE version 0x%x' % r['version'])
            if r['tsc_freq'] != 1000000000:
                P.err('INITIALIZE tsc_freq %d' % r['tsc_freq'])
            if r['nsec'] >= 1000000000 or r['sec'] < 1600000000:
                P.err('INITIALIZE timespec %d.%d' % (r['sec'], r['nsec']))
        if r['type'] == 5:
            P.err('PMCALLOCATE in a pmclog file (FreeBSD cannot resolve Linux events)')
        if r['type'] >= 32:
            P.err('pmcring type %d in a pmclog file (FreeBSD parser: ERROR)' % r['type'])
        if r['type'] == 1 and off + ln != len(b):
            P.err('CLOSELOG at %d, not last (%d bytes follow)' % (off, len(b) - off - ln))
        if r['ts'] < last_ts:
            P.err('timestamp goes back at %d (%s): %d < %d' % (off, r['name'], r['ts'], last_ts))
        last_ts = max(last_ts, r['ts'])
        S.rec(r)
        recs.append(r)
        n += 1
        off += ln
        if r['type'] == 1:
            break
    if off < len(b) and not P.errs and not cut:
        P.err('%d bytes after CLOSELOG' % (len(b) - off))
    closed = bool(recs) and recs[-1]['type'] == 1
    if not killed and not closed:
        P.err('no CLOSELOG at the end (%d records%s)' % (n, ', cut short' if cut else ''))
    if cut:
        P.note('cut short: last %d bytes are a partial record' % (len(b) - off))
    S.finish(meta['mode'], meta.get('victim'), meta.get('vtid'))
    ncc = sum(1 for r in recs if r['type'] == 16)
    # FILE.periods
    if periods_path and os.path.exists(periods_path):
        pb = open(periods_path, 'rb').read()
        if pb[:8] != b'pmcrprd\0':
            P.err('periods: magic %r' % pb[:8])
        else:
            start = u64(pb, 8)
            ne = (len(pb) - 16) // 8
            if init and start != init['sec'] * 1000000000 + init['nsec']:
                P.err('periods: start %d != INITIALIZE %d.%09d' % (start, init['sec'], init['nsec']))
            if ne > ncc:
                P.err('periods: %d entries for %d CALLCHAINs' % (ne, ncc))
            if closed and ne != ncc:
                P.err('periods: %d entries for %d CALLCHAINs in a finished file' % (ne, ncc))
            zero = sum(1 for i in range(ne) if u64(pb, 16 + 8 * i) == 0)
            if zero:
                P.note('periods: %d of %d entries 0' % (zero, ne))
    elif ncc and closed:
        P.err('no FILE.periods beside a finished file with %d samples' % ncc)
    return {'records': n, 'closed': closed, 'cut': cut, 'types': S.types, 'cpus': S.cpus,
            'ncc': ncc, 'init': init, 'recs': recs}


# ---------------------------------------------------------------- barman
BM_MAGIC64 = 0x4241524D414E3634


def check_barman(path, P, meta, killed):
    b = open(path, 'rb').read()
    if len(b) < 92:
        if killed:
            P.note('barman: %d bytes, no header' % len(b))
            return {'records': 0}
        P.err('barman: %d bytes' % len(b))
        return {'records': 0}
    magic = u64(b, 0)
    if magic != BM_MAGIC64:
        P.err('barman magic 0x%x' % magic)
        return {'records': 0}
    ver, hlen, dst, tname = struct.unpack_from('<IIII', b, 8)
    last_ts = u64(b, 24)
    rate = u32(b, 32)
    max_cores, max_ti, max_mm, max_pmu, max_str, ncust = struct.unpack_from('<6I', b, 36)
    base, mult, div, unix = struct.unpack_from('<4Q', b, 60)
    if ver != 3 or dst != 4:
        P.err('barman: version %d store %d' % (ver, dst))
    if max_str != 1024:
        P.err('barman: string table %d' % max_str)
    want = 92 + 4 + 1024 + 60 * max_cores + 4 + 16 * max_ti + 4 + 40 * max_mm
    want = (want + 7) & ~7
    want += 16
    if hlen != want:
        P.err('barman: header_length %d, layout gives %d' % (hlen, want))
    if max_cores != int(meta.get('ncpu', 2)):
        P.err('barman: max_cores %d' % max_cores)
    if len(b) < hlen:
        P.err('barman: file %d bytes < header %d' % (len(b), hlen))
        return {'records': 0}
    if mult == 0 or div == 0:
        P.err('barman: clock %d/%d' % (mult, div))
    strlen_used = u32(b, 92)
    strtab = b[96:96 + 1024]
    if strlen_used > 1024:
        P.err('barman: string table used %d' % strlen_used)
    o = 96 + 1024 + 60 * max_cores
    if any(b[96 + 1024:o]):
        P.note('barman: per-core PMU settings not zero')
    nti = u32(b, o)
    if nti > max_ti:
        P.err('barman: task_info count %d' % nti)
    tasks = {}
    for i in range(min(nti, max_ti)):
        ts, tid, np_ = struct.unpack_from('<QII', b, o + 4 + 16 * i)
        if np_ >= max(strlen_used, 1):
            P.err('barman: task %d name_ptr %d past used %d' % (tid, np_, strlen_used))
        tasks[tid] = np_
    o += 4 + 16 * max_ti
    nmm = u32(b, o)
    if nmm > max_mm:
        P.err('barman: mmap count %d' % nmm)
    for i in range(min(nmm, max_mm)):
        ts, task, mbase, mlen, moff, np_ = struct.unpack_from('<QIQQQI', b, o + 4 + 40 * i)
        if np_ >= max(strlen_used, 1):
            P.err('barman: mmap name_ptr %d past %d' % (np_, strlen_used))
    # frames
    off = hlen
    n = 0
    prev = 0
    lastf = None
    kinds = {}
    cut = False
    cores = {}
    while off < len(b):
        if len(b) - off < 8:
            cut = True
            break
        fl = u64(b, off)
        if fl == 0:
            P.err('barman frame @%d: length 0 (hole?)' % off)
            break
        if fl > 8192:
            P.err('barman frame @%d: length %d' % (off, fl))
            break
        if len(b) - off - 8 < fl:
            cut = True
            break
        f = b[off + 8:off + 8 + fl]
        if fl < 16:
            P.err('barman frame @%d: %d bytes' % (off, fl))
            break
        typ, core, ts = struct.unpack_from('<IIQ', f, 0)
        okl = {2: lambda l: l >= 28 and (l - 28) % 8 == 0, 3: lambda l: l == 21,
               5: lambda l: l >= 41, 9: lambda l: l == 20}
        if typ not in okl:
            P.err('barman frame @%d: type %d' % (off, typ))
            break
        if not okl[typ](fl):
            P.err('barman frame @%d type %d: length %d' % (off, typ, fl))
        if typ == 5:
            dl = u64(f, 20)
            if 41 + dl != fl:
                P.err('barman ANNOTATION @%d: data_length %d in %d' % (off, dl, fl))
        if typ == 2:
            task = u32(f, 16)
            pc = u64(f, 20)
            if pc == 0:
                P.err('barman SAMPLE @%d: pc 0' % off)
        if core != 0xffffffff and core >= max_cores:
            P.err('barman frame @%d: core %d' % (off, core))
        cores[core] = cores.get(core, 0) + 1
        if ts < prev:
            P.err('barman frame @%d: ts %d < %d' % (off, ts, prev))
        if ts < base:
            P.err('barman frame @%d: ts %d before timestamp_base %d' % (off, ts, base))
        prev = max(prev, ts)
        kinds[typ] = kinds.get(typ, 0) + 1
        lastf = ts
        n += 1
        off += 8 + fl
    if cut:
        P.note('barman: cut short, %d bytes of a partial frame' % (len(b) - off))
    if lastf is not None:
        if killed:
            if last_ts > lastf:
                P.err('barman: header last_ts %d past the last frame %d (killed)' % (last_ts, lastf))
        elif last_ts < lastf:
            P.err('barman: final header last_ts %d older than last frame %d' % (last_ts, lastf))
    if meta['mode'] == 'cpu':
        want = set()
        for part in re.search(r'-C (\S+)', meta['args']).group(1).split(','):
            a, _, c = part.partition('-')
            want.update(range(int(a), int(c or a) + 1))
        bad = {c: k for c, k in cores.items() if c not in want and c != 0xffffffff}
        if bad:
            # only samples and switches are limited to the CPUs
            P.note('barman -C: frames on other cores %s (checking types)' % bad)
    return {'records': n, 'kinds': kinds, 'cut': cut, 'tasks': len(tasks), 'hlen': hlen,
            'rate': rate, 'cores': cores}


# ---------------------------------------------------------------- blob
BLOB_MAGIC = {'DAT': b'blobdat\0', 'OFFSET': b'bloboff\0', 'TIMING': b'blobtim\0', 'TYPE': b'blobtyp\0'}


def blob_sets(d):
    sets = {}
    for root, _, files in os.walk(d):
        for f in files:
            m = re.match(r'(.+)\.(DAT|OFFSET|TIMING|TYPE)\.(\d+)$', f)
            if m:
                sets.setdefault((root, m.group(1), int(m.group(3))), {})[m.group(2)] = os.path.join(root, f)
    return sets


def check_blob_set(key, files, P, meta, killed, final_write_failed, S, state):
    root, stream, t = key
    tag = '%s.%d' % (stream, t)
    timing = '--timing' in meta['args']
    need = ['DAT', 'OFFSET', 'TYPE'] + (['TIMING'] if timing else [])
    for k in need:
        if k not in files:
            P.err('%s: no %s file' % (tag, k))
            return 0
    data = {k: open(v, 'rb').read() for k, v in files.items()}
    for k, v in data.items():
        if v[:8] != BLOB_MAGIC[k]:
            P.err('%s.%s: magic %r (size %d)' % (tag, k, v[:8], len(v)))
            return 0
    off_b, typ_b, dat = data['OFFSET'], data['TYPE'], data['DAT']
    tim_b = data.get('TIMING')
    noff = (len(off_b) - 8) // 8
    ntyp = len(typ_b) - 8
    ntim = (len(tim_b) - 8) // 16 if tim_b else None
    whole = not killed
    if (len(off_b) - 8) % 8:
        (P.err if whole else P.note)('%s: OFFSET %d bytes, not whole entries' % (tag, len(off_b)))
    if tim_b is not None and (len(tim_b) - 8) % 16:
        (P.err if whole else P.note)('%s: TIMING %d bytes: LDMS requires 8 mod 16' % (tag, len(tim_b)))
    if noff > ntyp or (ntim is not None and noff > ntim):
        P.err('%s: OFFSET has %d entries, TYPE %d, TIMING %s (commit before metadata)' % (tag, noff, ntyp, ntim))
    if whole and (noff != ntyp or (ntim is not None and noff != ntim)):
        P.err('%s: finished set: OFFSET %d, TYPE %d, TIMING %s entries' % (tag, noff, ntyp, ntim))
    n = min(noff, ntyp, ntim if ntim is not None else noff)
    offs = [u64(off_b, 8 + 8 * i) for i in range(noff)]
    if offs and offs[0] != 8:
        P.err('%s: first OFFSET %d, not 8 (LDMS offset bug copied?)' % (tag, offs[0]))
    js = None
    last_end = 8
    prev_ts = 0
    for i in range(n):
        o = offs[i]
        if o != last_end:
            P.err('%s: message %d at %d, previous ended at %d' % (tag, i, o, last_end))
            break
        if o >= len(dat):
            P.err('%s: OFFSET %d points past DAT (%d bytes)' % (tag, o, len(dat)))
            break
        ty = typ_b[8 + i:9 + i]
        if ty == b'j':
            end = dat.find(b'\0', o)
            if end < 0:
                P.err('%s: JSON message %d has no NUL' % (tag, i))
                break
            msg = dat[o:end]
            nxt = end + 1
            try:
                txt = msg.decode('utf-8')
            except UnicodeDecodeError:
                P.err('%s: message %d not UTF-8' % (tag, i))
                break
            if any(c < 0x20 or c > 0x7e for c in msg):
                P.err('%s: message %d not printable ASCII' % (tag, i))
            try:
                obj = json.loads(txt)
            except ValueError as e:
                P.err('%s: message %d not JSON: %s: %r' % (tag, i, e, txt[:120]))
                break
            if not isinstance(obj, dict):
                P.err('%s: message %d not an object' % (tag, i))
                break
            for k, v in obj.items():
                if v is None or isinstance(v, (dict, list)):
                    P.err('%s: message %d key %s: %r (LDMS: scalars only)' % (tag, i, k, v))
                if isinstance(v, str) and ',' in v:
                    P.err('%s: message %d key %s has a comma' % (tag, i, k))
            ts = obj.get('ts')
            if ts is None:
                P.err('%s: message %d has no ts' % (tag, i))
            else:
                if ts < prev_ts:
                    P.err('%s: message %d ts goes back' % (tag, i))
                prev_ts = max(prev_ts, ts)
            if tim_b is not None and i < ntim:
                sec, usec = u64(tim_b, 8 + 16 * i), u64(tim_b, 16 + 16 * i)
                if usec >= 1000000:
                    P.err('%s: TIMING %d usec %d' % (tag, i, usec))
                if 'sec' in obj and (obj['sec'], obj.get('usec')) != (sec, usec):
                    P.err('%s: message %d sec/usec %s.%s, TIMING %d.%06d' % (tag, i, obj['sec'], obj.get('usec'), sec, usec))
            json_semantics(obj, S, i, tag, state)
        elif ty == b's':
            try:
                r, ln = parse_record(dat, o, P, tag)
            except ValueError as e:
                P.err(str(e))
                break
            if r is None:
                P.err('%s: message %d cut short in DAT' % (tag, i))
                break
            nxt = o + ln
            if r['ts'] < prev_ts:
                P.err('%s: message %d ts goes back' % (tag, i))
            prev_ts = max(prev_ts, r['ts'])
            if tim_b is not None and i < ntim:
                usec = u64(tim_b, 16 + 16 * i)
                if usec >= 1000000:
                    P.err('%s: TIMING %d usec %d' % (tag, i, usec))
            if r['type'] not in (32,) and r['type'] != 33:
                S.rec(r)
            elif r['type'] == 33:
                S.types['PERIOD'] = S.types.get('PERIOD', 0) + 1
            state['types'][r['name']] = state['types'].get(r['name'], 0) + 1
        else:
            P.err('%s: TYPE %d is %r' % (tag, i, ty))
            break
        last_end = nxt
    if n and whole and last_end != len(dat):
        P.err('%s: DAT is %d bytes, its last message ends at %d' % (tag, len(dat), last_end))
    if n and not whole and last_end != len(dat):
        P.note('%s: DAT holds %d bytes no OFFSET entry covers' % (tag, len(dat) - last_end))
    if final_write_failed and last_end != len(dat):
        P.err('%s: after a failed write DAT ends %d bytes past the last message' % (tag, len(dat) - last_end))
    if final_write_failed and (noff != ntyp or (ntim is not None and noff != ntim)):
        P.err('%s: after a failed write: OFFSET %d, TYPE %d, TIMING %s' % (tag, noff, ntyp, ntim))
    if meta.get('roll') and len(dat) > meta['roll'] and n > 1:
        P.err('%s: DAT %d bytes > --roll-size %d' % (tag, len(dat), meta['roll']))
    return n


JSON_PAIRS = {'callchain': 'CALLCHAIN', 'proccsw': 'PROCCSW', 'thr_create': 'THR_CREATE',
              'proc_create': 'PROC_CREATE', 'procfork': 'PROCFORK', 'procexec': 'PROCEXEC',
              'pmcallocatedyn': 'PMCALLOCATEDYN', 'pmcallocate': 'PMCALLOCATE',
              'procexit': 'PROCEXIT', 'map_in': 'MAP_IN', 'map_out': 'MAP_OUT'}


def json_semantics(o, S, i, tag, state):
    t = o.get('type')
    state['types'][t] = state['types'].get(t, 0) + 1
    name = JSON_PAIRS.get(t)
    if not name:
        return
    r = {'name': name, 'off': '%s#%d' % (tag, i)}
    try:
        if t == 'callchain':
            pcs = [int(x, 16) for x in o['pc'].split(';')] if o.get('pc') else []
            if len(pcs) != o['npc']:
                S.P.err('%s#%d: npc %d, %d pcs' % (tag, i, o['npc'], len(pcs)))
            if o['cpu'] != o['cc_cpu']:
                S.P.err('%s#%d: cpu %d, cc_cpu %d' % (tag, i, o['cpu'], o['cc_cpu']))
            r.update(pid=o['pid'], tid=o['tid'], pmcid=o['pmcid'], cpu=o['cc_cpu'],
                     ccflags=o['cc_flags'], pcs=pcs)
            if 'period' not in o:
                S.P.err('%s#%d: callchain without period' % (tag, i))
        elif t == 'proccsw':
            r.update(pid=o['pid'], tid=o['tid'], pmcid=o['pmcid'], value=o['value'])
        elif t == 'thr_create':
            r.update(pid=o['pid'], tid=o['tid'])
        elif t == 'proc_create':
            r.update(pid=o['pid'])
        elif t == 'procfork':
            r.update(oldpid=o['oldpid'], newpid=o['newpid'])
        elif t == 'procexec':
            r.update(pid=o['pid'], pmcid=o['pmcid'], base=int(o['base'], 16) if isinstance(o['base'], str) else o['base'],
                     dyn=int(o['dyn'], 16) if isinstance(o['dyn'], str) else o['dyn'], path=o.get('path', ''))
        elif t == 'pmcallocatedyn':
            r.update(pmcid=o['pmcid'], evname=o.get('name'))
        elif t == 'pmcallocate':
            r.update(pmcid=o['pmcid'])
        elif t == 'procexit':
            r.update(pid=o['pid'], pmcid=o['pmcid'])
        elif t == 'map_in':
            r.update(pid=o['pid'], start=int(o['start'], 16) if isinstance(o['start'], str) else o['start'])
        elif t == 'map_out':
            r.update(pid=o['pid'], start=int(o['start'], 16) if isinstance(o['start'], str) else o['start'],
                     end=int(o['end'], 16) if isinstance(o['end'], str) else o['end'])
    except (KeyError, ValueError) as e:
        S.P.err('%s#%d %s: field %s' % (tag, i, t, e))
        return
    for k in ('pmcid',):
        if isinstance(r.get(k), str):
            r[k] = int(r[k], 16)
    S.rec(r)


def check_blob(d, P, meta, killed, write_failed):
    sets = blob_sets(d)
    if not sets:
        if killed or write_failed:
            P.note('blob: no file set')
            return {'records': 0}
        P.err('blob: no file set in %s' % d)
        return {'records': 0}
    S = Semantics(P, meta)
    state = {'types': {}}
    total = 0
    by_stream = {}
    for key in sorted(sets):
        by_stream.setdefault(key[1], []).append(key[2])
    for stream, ts in by_stream.items():
        if len(ts) != len(set(ts)):
            P.err('stream %s: duplicate $t' % stream)
    S_by_stream = {}
    for key in sorted(sets, key=lambda k: (k[1], k[2])):
        Ss = S_by_stream.setdefault(key[1], Semantics(P, meta))
        total += check_blob_set(key, sets[key], P, meta, killed, write_failed, Ss, state)
    for Ss in S_by_stream.values():
        # pmcids / processes are per stream: only pair checks are global
        pass
    # the -C / -t rules on the union of streams
    U = Semantics(P, meta)
    for Ss in S_by_stream.values():
        for c, k in Ss.cpus.items():
            U.cpus[c] = U.cpus.get(c, 0) + k
        for t, o in Ss.first_seen_tid.items():
            U.first_seen_tid.setdefault(t, o)
        for t, p in Ss.tid2pid.items():
            U.pair(t, p, 'stream')
        U.threads_created |= Ss.threads_created
    if meta['mode'] in ('tid', 'cpu'):
        U.finish(meta['mode'], meta.get('victim'), meta.get('vtid'))
    return {'records': total, 'sets': len(sets), 'types': state['types'], 'cpus': U.cpus}


def has_zero_run(path, minrun=64):
    """A long run of zero bytes in a file is a hole a kill left."""
    b = open(path, 'rb').read()
    i = b.find(b'\0' * minrun)
    return i


def load_meta(d):
    m = {}
    for line in open(os.path.join(d, 'meta')):
        k, _, v = line.rstrip('\n').partition('=')
        m[k] = v
    m['args'] = open(os.path.join(d, 'args')).read().strip()
    mm = re.search(r'--roll-size (\S+)', m['args'])
    if mm:
        v = mm.group(1)
        mult = {'k': 1024, 'M': 1 << 20, 'G': 1 << 30}.get(v[-1], 1)
        m['roll'] = int(v.rstrip('kMG')) * mult
    return m


def scenario(d):
    P = Problems()
    meta = load_meta(d)
    args = meta['args']
    stop = meta['stop']
    rc = int(meta['rc'])
    err = open(os.path.join(d, 'rec.stderr'), errors='replace').read()
    # SIGHUP finishes the file as SIGTERM does (cli_sighup); OLD_HUP=1
    # checks a binary from before that, whose SIGHUP left a prefix
    hup_fixed = stop == 'hup' and not os.environ.get('OLD_HUP')
    killed = (stop == 'kill' or rc == 137 or (stop == 'hup' and not hup_fixed))
    fmt = 'pmclog'
    m = re.search(r'--format (\S+)', args)
    if m:
        fmt = m.group(1)
    if fmt == 'blob' and '--blob-json' in args:
        fmt = 'json'
    write_failed = stop == 'enospc'
    # expected exit status
    want = {'int': (0,), 'term': (0,), 'dur': (0,), 'exit': (0,), 'kill': (137,), 'hup': (129, 0),
            'enospc': (1,), 'stopcont': (0,)}[stop]
    if meta['mode'] == 'cmd':
        want = {'int': (130,), 'term': (143,), 'dur': (143,), 'exit': (0, 3), 'kill': (137,), 'hup': (129,),
                'enospc': (1,)}[stop]
        if 'exit 3' in args:
            want = (3,)
        if "trap '' TERM" in args:
            want = (137,)
    if hup_fixed:
        want = (129,) if meta['mode'] == 'cmd' else (0,)
    if rc not in want:
        P.err('exit status %d, expected %s' % (rc, want))
    if stop == 'enospc' and 'no space left on device' not in err:
        P.err('no "no space left on device" message: %r' % err[-300:])
    if meta.get('refcnt_after') not in ('0', ''):
        P.note('module refcnt %s right after exit' % meta.get('refcnt_after'))
    if meta['mode'] == 'cmd' and meta.get('workloads_left', '0') != '0':
        P.note('%s recorded workload processes still running after pmcring exited' % meta['workloads_left'])
    if meta['mode'] == 'tid' and not meta.get('vtid'):
        P.err('no thread found to record')
    out = os.path.join(d, 'rec.out')
    res = {}
    if fmt in ('blob', 'json'):
        res = check_blob(out, P, meta, killed, write_failed)
    elif not os.path.exists(out):
        (P.note if killed else P.err)('no output file')
    elif fmt == 'pmclog':
        res = check_pmclog(out, P, meta, killed or write_failed, out + '.periods')
        if not killed and not write_failed:
            bi = out + '.buildids'
            if not os.path.exists(bi):
                P.err('no FILE.buildids')
            else:
                lines = open(bi).read().split('\n')
                mm = re.match(r'pmcring-buildids 1 (\d+)$', lines[0])
                init = res.get('init')
                if not mm:
                    P.err('buildids: first line %r' % lines[0])
                elif init and int(mm.group(1)) != init['sec'] * 10**9 + init['nsec']:
                    P.err('buildids: start %s != INITIALIZE' % mm.group(1))
                paths = []
                for ln in lines[1:]:
                    if not ln:
                        continue
                    mm = re.match(r'([0-9a-f]{2,128}) (/.*)$', ln)
                    if not mm:
                        P.err('buildids: line %r' % ln)
                    else:
                        paths.append(mm.group(2))
                if paths != sorted(paths):
                    P.err('buildids: not sorted by path')
        if write_failed and res.get('closed'):
            P.note('ENOSPC, yet CLOSELOG written')
    elif fmt == 'barman':
        res = check_barman(out, P, meta, killed or write_failed)
    # what record said it wrote vs what the file holds
    mm = re.search(r'\((\d+) in the file\)', err)
    if mm and not killed and not write_failed:
        said = int(mm.group(1))
        got = res.get('records')
        if got is not None and said != got:
            P.err('summary says %d in the file, independent reader counts %d' % (said, got))
    if stop in ('int', 'term', 'dur', 'exit', 'stopcont') and float(meta['latency']) > STOP_BOUND and "trap ''" not in args:
        P.err('stop took %s s' % meta['latency'])
    if stop == 'dur':
        md = re.search(r'--duration (\S+)', args)
        tot = float(meta['total'])
        if md and tot > float(md.group(1)) + (STOP_BOUND + 5 if "trap ''" in args else STOP_BOUND):
            P.err('--duration %s: ran %s s' % (md.group(1), tot))
    # holes: a 4 KiB run of zeros in the data part of any output file
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            if f.startswith('rec.out') and not f.endswith('.buildids'):
                i = has_zero_run(p, 4096)
                if i >= 0 and fmt != 'barman':
                    P.err('%s: 4 KiB of zeros at %d (hole?)' % (f, i))
                if fmt == 'barman' and i >= 0 and i > res.get('hlen', 1 << 62):
                    P.err('%s: 4 KiB of zeros at %d after the header (hole?)' % (f, i))
    return meta, fmt, rc, res, P


def main():
    global ARCH
    bad = 0
    for d in sys.argv[1:]:
        info = os.path.join(os.path.dirname(os.path.normpath(d)), 'guest-info.txt')
        if os.path.exists(info) and open(info).read().split()[1].endswith('-arm64'):
            ARCH = 'arm64'
    for d in sys.argv[1:]:
        if os.path.basename(os.path.normpath(d)) == 'x-devnull':
            # -o /dev/null: exit 0, no sidecar created next to the device
            ls = open(os.path.join(d, 'ls')).read()
            rc = open(os.path.join(d, 'rc')).read().strip()
            ok = rc == 'rc=0' and '.periods' not in ls and '.buildids' not in ls
            bad += not ok
            print('%-4s %-26s -o /dev/null: %s, %s' % ('ok' if ok else 'FAIL', 'x-devnull', rc,
                  'no sidecar' if ok else ls.strip()))
            continue
        if not os.path.exists(os.path.join(d, 'meta')):
            continue
        try:
            meta, fmt, rc, res, P = scenario(d)
        except Exception as e:  # a checker bug: say so
            print('CHECKER-ERROR %s: %r' % (d, e))
            bad += 1
            continue
        verdict = 'FAIL' if P.errs else 'ok'
        bad += bool(P.errs)
        types = res.get('types') or res.get('kinds') or {}
        print('%-4s %-26s mode=%-4s fmt=%-6s stop=%-6s rc=%-3d lat=%5ss records=%s%s cpus=%s' % (
            verdict, meta['name'], meta['mode'], fmt, meta['stop'], rc, meta['latency'],
            res.get('records'), ' sets=%d' % res['sets'] if 'sets' in res else '',
            res.get('cpus') or res.get('cores')))
        for e in P.errs:
            print('     ERR  ' + e)
        for n in P.notes:
            print('     note ' + n)
        if os.environ.get('V'):
            print('     types %s' % types)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
