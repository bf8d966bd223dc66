#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# The rules by which FlameGraph's stackcollapse-perf.pl reads `perf script`
# output, restated (Debian ships no package with the script itself):
#
#  - a line starting with '#' is a comment;
#  - an event line "COMM PID/TID ..." or "COMM TID ...": COMM is the
#    shortest run before the first whitespace and number (/^(\S.+?)\s+(\d+)/),
#    spaces in it become '_'; it is the first frame of the stack;
#  - a stack line "IP FUNC (DSO)" (/^\s*(\w+)\s*(.+) \((\S*)\)/): FUNC
#    loses a trailing "+0xOFF", ';' becomes ':', '<' '>' '"' '\'' go, and
#    anything from the first '(' on goes; frames come leaf first, so each
#    is put in front of the ones before it;
#  - a blank line ends the sample: "COMM;ROOT;...;LEAF" counts 1;
#  - any other line is "Unrecognized line" (a warning on stderr).
#
# Prints the folded stacks sorted, "STACK COUNT" per line, as the script
# does.  Exits 1 if a line was unrecognized or a sample had no frames.
use strict;
use warnings;

my (%collapsed, @stack, $pname, $bad);
while (my $line = <>) {
	next if $line =~ /^#/;
	chomp $line;
	if ($line eq '') {
		if (!@stack) {
			warn "sample without frames\n";
			$bad = 1;
		}
		$collapsed{join(';', defined $pname ? $pname : '', @stack)}++;
		@stack = ();
		undef $pname;
		next;
	}
	if ($line =~ /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/) {
		($pname = $1) =~ tr/ /_/;
	} elsif ($line =~ /^\s*(\w+)\s*(.+) \((\S*)\)/) {
		my $func = $2;
		$func =~ s/\+0x[\da-f]+$//;
		$func =~ s/;/:/g;
		$func =~ tr/<>//d;
		$func =~ s/\(.*// if $func !~ m/\.\(.*\)\./;
		$func =~ tr/"\'//d;
		unshift @stack, $func;
	} else {
		warn "Unrecognized line: $line\n";
		$bad = 1;
	}
}
print "$_ $collapsed{$_}\n" for sort keys %collapsed;
exit($bad ? 1 : 0);
