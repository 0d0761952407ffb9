#!/usr/bin/env python3
"""Prints, from JUnit's XML report (java-tests/run.sh writes it to build/java-tests-out/reports/),
the cases and seconds per JDK (a case's display name starts "JDK N"), and for the cases that
name no JDK: what the suite costs per JDK, for keeping CI within its time (doc/testing.md).

usage: jdk_times.py [REPORT.xml]   (default: build/java-tests-out/reports/TEST-junit-jupiter.xml)
"""
import re
import sys
import xml.etree.ElementTree as ET


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else 'build/java-tests-out/reports/TEST-junit-jupiter.xml'
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        sys.exit(f'jdk_times: cannot read {path}: {e}')
    rows = {}
    for case in root.iter('testcase'):
        out = case.findtext('system-out') or ''
        m = re.search(r'display-name: JDK (\d+)', out)
        key = f'JDK {m.group(1)}' if m else 'no JDK parameter'
        state = ('failed' if case.find('failure') is not None or case.find('error') is not None
                 else 'skipped' if case.find('skipped') is not None else 'passed')
        r = rows.setdefault(key, {'passed': 0, 'failed': 0, 'skipped': 0, 'seconds': 0.0})
        r[state] += 1
        r['seconds'] += float(case.get('time', '0'))
    for key in sorted(rows):
        r = rows[key]
        print(f"{key:17} {r['passed']:4} passed {r['failed']:3} failed {r['skipped']:3} skipped "
              f"{r['seconds']:8.1f} s")


if __name__ == '__main__':
    main()
