#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Talk to a QEMU HMP monitor on a unix socket (tcg_hang.sh's helper).

  qemu_mon.py SOCK cmd 'HMP COMMAND'...      print each command's output
  qemu_mon.py SOCK rips N INTERVAL KALLSYMS  N samples of every vCPU's RIP,
                                             with the symbol from KALLSYMS
  qemu_mon.py SOCK bytes ADDR N              N bytes of guest virtual memory
"""
import bisect
import re
import socket
import sys
import time


# The kernel's int3 path on x86 (6.1, 6.12): entry, handler, text_poke_bp's
# and kprobes' handlers.
INT3_PATH = {'asm_exc_int3', 'exc_int3', 'poke_int3_handler',
             'kprobe_int3_handler', 'do_int3', 'do_int3_user',
             'irqentry_enter', 'irqentry_exit', 'irqentry_nmi_enter',
             'irqentry_nmi_exit', 'bsearch', 'patch_cmp',
             'error_entry', 'error_return', 'paranoid_entry',
             'paranoid_exit', 'restore_regs_and_return_to_kernel',
             'native_iret', 'get_kprobe', 'kprobe_running',
             'skip_prefixes', 'insn_get_length'}


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(1.0)
    drain(s)
    return s


def drain(s):
    out = b''
    while True:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        out += d
    return out.decode(errors='replace')


def hmp(s, cmd):
    s.sendall((cmd + '\n').encode())
    time.sleep(0.2)
    # HMP echoes the command with terminal escapes: keep the output lines.
    lines = [ln for ln in drain(s).replace('\r', '').split('\n')
             if ln and '\x1b' not in ln and not ln.startswith('(qemu)')]
    return '\n'.join(lines)


def load_syms(path):
    syms = []
    with open(path) as f:
        for ln in f:
            p = ln.split()
            if len(p) >= 3 and p[1] in 'tTwW':
                a = int(p[0], 16)
                if a:
                    syms.append((a, p[2]))
    syms.sort()
    return syms


def symbolize(syms, addr):
    keys = [a for a, _ in syms]
    i = bisect.bisect_right(keys, addr) - 1
    if i < 0 or addr - syms[i][0] > 0x100000:
        return '?'
    return '%s+0x%x' % (syms[i][1], addr - syms[i][0])


def main():
    s = connect(sys.argv[1])
    what = sys.argv[2]
    if what == 'cmd':
        for c in sys.argv[3:]:
            print(hmp(s, c))
    elif what == 'rips':
        n, gap = int(sys.argv[3]), float(sys.argv[4])
        syms = load_syms(sys.argv[5])
        seen = {}
        for i in range(n):
            out = hmp(s, 'info registers -a')
            rips = re.findall(r'RIP=([0-9a-f]+) RFL=([0-9a-f]+)', out)
            for c, (r, _) in enumerate(rips):
                seen.setdefault(c, []).append(int(r, 16))
            print('sample %d: ' % i + '  '.join(
                'cpu%d %s (%s) rflags %s' % (c, r, symbolize(syms, int(r, 16)),
                                             f)
                for c, (r, f) in enumerate(rips)))
            time.sleep(gap)
        # A vCPU that only ever shows the int3 entry path and one more
        # address keeps trapping on that address: print it for the caller.
        for c, addrs in seen.items():
            names = [symbolize(syms, a) for a in addrs]
            if not any(nm.split('+')[0] in INT3_PATH for nm in names):
                continue
            sites = sorted({a for a, nm in zip(addrs, names)
                            if nm.split('+')[0] not in INT3_PATH})
            print('int3-loop cpu%d sites %s' % (c, ' '.join(
                '%x:%s' % (a, symbolize(syms, a)) for a in sites)))
    elif what == 'bytes':
        print(hmp(s, 'x /%dxb 0x%s' % (int(sys.argv[4]),
                                      sys.argv[3].replace('0x', ''))))


if __name__ == '__main__':
    main()
