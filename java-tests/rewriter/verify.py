#!/usr/bin/env python3
"""The JVM's own verifier and real execution as the judges of the class-file rewriter.

  verify.py fixtures --tool T --jdk HOME --release R [--debug g|none] --work DIR SRC_DIR...
      compile the fixture sources (plus the generated Huge.java) with HOME/bin/javac --release R,
      rewrite them with T (tests/rewrite_classes), and run harness/RunFixtures under
      HOME/bin/java -Xverify:all: every rewritten class must verify, every run() must return
      the same transcript as the original, and the checking tracker must balance.

  verify.py compile --jdk HOME --release R [--debug g|none] --work DIR --stamp FILE SRC_DIR...
      only compile the fixtures into DIR/classes (tests/test_rewriter sweeps them).

  verify.py probe --agent SO --jdk HOME --release R --work DIR [--options OPTS]... SRC_DIR...
      run the fixtures under the probe agent (probe_agent.c: the deployment steps of the real
      tracker: DefineClass in the boot loader, RegisterNatives, module reads, engaged, rewriting
      in the ClassFileLoadHook) and compare with a run without it.

  verify.py old --tool T --jdk HOME --work DIR [--jar JAR]
      class files below version 50 (no StackMapTable; the old type-inferencing verifier):
      a generated class with jsr/ret subroutines (versions 49 and 45), and the classes of JAR
      when it exists (e.g. a library compiled for Java 5), loaded and linked.

  verify.py jdk --tool T --jdk HOME --work DIR [--image DIR]
      rewrite every class of HOME's runtime image (all modules, the rewriter_should_skip list
      applied), boot HOME/bin/java with the rewritten modules patched in (--patch-module) and a
      counting tracker stub inside java.base, link every class under -Xverify:all and run a
      small workload on the rewritten JDK.

  verify.py extract --jdk HOME --dir DIR --stamp FILE
      jimage-extract HOME's runtime image into DIR (shared by the tests that need it).
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import classgen  # noqa: E402


def run(cmd, **kw):
    print('+ ' + ' '.join(cmd[:12]) + (' ...' if len(cmd) > 12 else ''), flush=True)
    return subprocess.run(cmd, **kw)


def check(cmd, **kw):
    r = run(cmd, **kw)
    if r.returncode != 0:
        sys.exit('command failed with status %d' % r.returncode)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def java_files(dirs):
    out = []
    for d in dirs:
        for root, _, files in os.walk(d):
            out += [os.path.join(root, f) for f in files if f.endswith('.java')]
    return sorted(out)


def build_harness(jdk, work):
    harness = fresh(os.path.join(work, 'harness'))
    tracker = fresh(os.path.join(work, 'tracker'))
    javac = os.path.join(jdk, 'bin', 'javac')
    check([javac, '--release', '11', '-d', tracker,
           os.path.join(HERE, 'harness', 'tracker', 'hprof', 'Tracker.java')])
    check([javac, '--release', '11', '-d', harness, os.path.join(HERE, 'harness', 'RunFixtures.java')])
    return harness, tracker


def run_fixtures(tool, jdk, orig, work, label):
    rw = fresh(os.path.join(work, 'rewritten'))
    cmap = os.path.join(work, 'map.txt')
    check([tool, '--map', cmap, '--out', rw, orig])
    harness, tracker = build_harness(jdk, work)
    java = os.path.join(jdk, 'bin', 'java')
    r = run([java, '-Xverify:all', '-cp', harness, 'RunFixtures', orig, rw, tracker, cmap])
    if r.returncode != 0:
        sys.exit('%s: FAILED' % label)
    print('%s: passed' % label)


def compile_fixtures(a, work, orig):
    src = fresh(os.path.join(work, 'src'))
    check([sys.executable, os.path.join(HERE, 'gen_huge.py'), src])
    javac = os.path.join(a.jdk, 'bin', 'javac')
    debug = ['-g'] if a.debug == 'g' else ['-g:none']
    check([javac, '--release', a.release, '-nowarn', '-Xlint:-options'] + debug + ['-d', orig] +
          java_files(a.sources + [src]))


def cmd_fixtures(a):
    work = fresh(a.work)
    orig = fresh(os.path.join(work, 'original'))
    compile_fixtures(a, work, orig)
    run_fixtures(a.tool, a.jdk, orig, work, 'fixtures (release %s, %s)' % (a.release, a.debug))


def cmd_compile(a):
    """Only compiles the fixtures into WORK/classes (for tests/test_rewriter), then touches STAMP."""
    work = fresh(a.work)
    compile_fixtures(a, work, fresh(os.path.join(work, 'classes')))
    open(a.stamp, 'w').close()


def cmd_old(a):
    work = fresh(a.work)
    orig = fresh(os.path.join(work, 'original'))
    for major, name in ((49, 'Jsr49'), (45, 'Jsr45')):
        with open(os.path.join(orig, name + '.class'), 'wb') as f:
            f.write(classgen.jsr_class(major, name))
    run_fixtures(a.tool, a.jdk, orig, os.path.join(work, 'jsr'), 'jsr/ret classes (versions 49, 45)')
    if a.jar and os.path.exists(a.jar):
        jar_dir = fresh(os.path.join(work, 'jar'))
        check([os.path.join(a.jdk, 'bin', 'jar'), 'xf', os.path.abspath(a.jar)], cwd=jar_dir)
        shutil.rmtree(os.path.join(jar_dir, 'META-INF'), ignore_errors=True)
        run_link_only(a, jar_dir, os.path.join(work, 'jar-run'), os.path.basename(a.jar))
    else:
        print('(no old jar given or found: %s)' % a.jar)


def run_link_only(a, orig, work, label):
    """Rewrites a library and links every class of it (no run() to call)."""
    fresh(work)
    rw = fresh(os.path.join(work, 'rewritten'))
    check([a.tool, '--quiet', '--out', rw, orig])
    harness, tracker = build_harness(a.jdk, work)
    java = os.path.join(a.jdk, 'bin', 'java')
    cmap = os.path.join(work, 'empty-map.txt')
    open(cmap, 'w').close()
    # RunFixtures links everything first; a library has no fixture, which it reports as one
    # failure: accept exactly that outcome and nothing else.
    r = run([java, '-Xverify:all', '-cp', harness, 'RunFixtures', orig, rw, tracker, cmap],
            stdout=subprocess.PIPE, universal_newlines=True)
    print(r.stdout)
    fails = [l for l in r.stdout.splitlines() if l.startswith('FAIL ')]
    if fails != ['FAIL no fixture found']:
        sys.exit('%s: FAILED' % label)
    print('%s: every rewritten class links and verifies' % label)


RUN_MAIN = '''public class RunMain {
    public static void main(String[] a) throws Exception {
        for (String n : a)
            System.out.println("== " + n + "\\n" + Class.forName(n).getMethod("run").invoke(null));
    }
}
'''


def cmd_probe(a):
    """Runs the fixtures under the probe agent (java-tests/rewriter/probe_agent.c: the real
    deployment steps of the tracker) and compares with a run without it."""
    import re
    work = fresh(a.work)
    orig = fresh(os.path.join(work, 'classes'))
    compile_fixtures(a, work, orig)
    with open(os.path.join(orig, 'RunMain.java'), 'w') as f:
        f.write(RUN_MAIN)
    check([os.path.join(a.jdk, 'bin', 'javac'), '-d', orig, os.path.join(orig, 'RunMain.java')])
    fixtures = sorted(f[:-6] for f in os.listdir(orig)
                      if f.endswith('.class') and '$' not in f and f not in ('RunMain.class',))
    java = os.path.join(a.jdk, 'bin', 'java')
    base = run([java, '-cp', orig, 'RunMain'] + fixtures, stdout=subprocess.PIPE,
               universal_newlines=True)
    if base.returncode != 0:
        sys.exit('the fixtures fail without the agent')
    for opts in a.options:
        r = run([java, '-Xverify:all', '-agentpath:%s=%s' % (a.agent, opts), '-cp', orig, 'RunMain']
                + fixtures, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        sys.stderr.write(r.stderr)
        m = re.search(r'probe: rewritten (\d+) boot \+ (\d+) other classes, (\d+) left alone, '
                      r'(\d+) errors; entries (\d+), exits (\d+), exits without entry (\d+)',
                      r.stderr)
        if r.returncode != 0 or not m:
            sys.exit('probe (%s): the JVM failed (status %d)' % (opts, r.returncode))
        boot, other, _, errs, entries, exits, under = (int(x) for x in m.groups())
        if r.stdout != base.stdout:
            sys.exit('probe (%s): the fixtures behave differently under the agent' % opts)
        if errs or under or boot == 0 or other == 0 or entries == 0 or exits == 0:
            sys.exit('probe (%s): unexpected counts' % opts)
        print('probe (%s): passed: %s' % (opts, m.group(0)))


STUB = '''package java.lang;
/** Counting stand-in for the tracker, patched into java.base so that every module can call it
 *  from the very first class the VM loads. Not thread-safe on purpose: no calls out. */
public final class HprofVerifyStub {
    private HprofVerifyStub() { }
    public static long entries, exits;
    public static void methodEntry(int c, int m) { entries++; }
    public static void methodExit(int c, int m) { exits++; }
}
'''

VERIFY_ALL = '''import java.nio.file.*;
import java.util.*;
/** Links every listed class of the boot layer (and so runs the verifier on it). */
public class VerifyAll {
    public static void main(String[] a) throws Exception {
        int ok = 0, verify = 0, other = 0, missing = 0;
        for (String line : Files.readAllLines(Paths.get(a[0]))) {
            String[] p = line.split(" ");
            Optional<Module> m = ModuleLayer.boot().findModule(p[0]);
            Class<?> c = m.isPresent() ? Class.forName(m.get(), p[1]) : null;
            if (c == null) { missing++; System.out.println("MISSING " + line); continue; }
            try {
                c.getDeclaredMethods();
                ok++;
            } catch (VerifyError | ClassFormatError e) {
                verify++;
                System.out.println("VERIFY " + p[1] + ": " + e);
            } catch (Throwable e) {
                other++;
                System.out.println("OTHER " + p[1] + ": " + e);
            }
        }
        System.out.println("linked " + ok + ", verify errors " + verify + ", other errors " + other
                + ", missing " + missing);
        System.exit(verify == 0 && missing == 0 ? 0 : 1);
    }
}
'''

WORKLOAD = '''import java.util.*;
import java.util.stream.*;
/** A little of everything on the rewritten JDK; prints the stub's counts. */
public class Workload {
    record P(int x, String s) { }
    public static void main(String[] a) throws Exception {
        List<P> ps = IntStream.range(0, 2000).mapToObj(i -> new P(i, "p" + i)).collect(Collectors.toList());
        Map<Boolean, Long> parts = ps.parallelStream().collect(Collectors.partitioningBy(p -> p.x() % 3 == 0, Collectors.counting()));
        String text = String.format("%s %08.3f %,d", parts, Math.PI, 1234567);
        try { Integer.parseInt("nope"); } catch (NumberFormatException e) { text += " nfe"; }
        StringBuilder sb = new StringBuilder();
        new TreeMap<>(Map.of("b", 2, "a", 1)).forEach((k, v) -> sb.append(k).append(v));
        Thread t = new Thread(() -> sb.append(" thread"));
        t.start(); t.join();
        Class<?> s = Class.forName("java.lang.HprofVerifyStub");
        long entries = s.getField("entries").getLong(null), exits = s.getField("exits").getLong(null);
        System.out.println(text + " " + sb + " entries=" + entries + " exits=" + exits);
        if (!text.startsWith("{false=1333, true=667} 0003.142 1,234,567 nfe") || entries < 100000)
            System.exit(1);
    }
}
'''


def extract(jdk, image):
    fresh(image)
    check([os.path.join(jdk, 'bin', 'jimage'), 'extract', '--dir', image,
           os.path.join(jdk, 'lib', 'modules')])


def cmd_extract(a):
    """Extracts HOME's runtime image into DIR (tests/meson.build does it once per JDK for
    tests/test_rewriter and 'verify.py jdk'), then touches STAMP."""
    extract(a.jdk, a.dir)
    open(a.stamp, 'w').close()


def cmd_jdk(a):
    work = a.work
    os.makedirs(work, exist_ok=True)
    java = os.path.join(a.jdk, 'bin', 'java')
    javac = os.path.join(a.jdk, 'bin', 'javac')
    image = a.image or os.path.join(work, 'image')
    if not a.image:
        extract(a.jdk, image)
    rw = fresh(os.path.join(work, 'rewritten'))
    check([a.tool, '--quiet', '--skip', '--tracker', 'java/lang/HprofVerifyStub', '--out', rw, image])
    stubsrc = fresh(os.path.join(work, 'stubsrc', 'java', 'lang'))
    with open(os.path.join(stubsrc, 'HprofVerifyStub.java'), 'w') as f:
        f.write(STUB)
    check([javac, '--patch-module', 'java.base=' + os.path.join(work, 'stubsrc'), '-d',
           os.path.join(rw, 'java.base'), os.path.join(stubsrc, 'HprofVerifyStub.java')])
    drv = fresh(os.path.join(work, 'driver'))
    for name, text in (('VerifyAll', VERIFY_ALL), ('Workload', WORKLOAD)):
        with open(os.path.join(drv, name + '.java'), 'w') as f:
            f.write(text)
    check([javac, '-d', drv, os.path.join(drv, 'VerifyAll.java'), os.path.join(drv, 'Workload.java')])
    listing = os.path.join(work, 'classes.txt')
    with open(listing, 'w') as out:
        for mod in sorted(os.listdir(image)):
            base = os.path.join(image, mod)
            for root, _, files in os.walk(base):
                for f in files:
                    if f.endswith('.class') and f != 'module-info.class':
                        rel = os.path.relpath(os.path.join(root, f), base)[:-6]
                        out.write('%s %s\n' % (mod, rel.replace(os.sep, '.')))
    argfile = os.path.join(work, 'patch.args')
    with open(argfile, 'w') as f:
        for mod in sorted(os.listdir(rw)):
            f.write('--patch-module %s=%s\n' % (mod, os.path.join(rw, mod)))
    quiet = {'stderr': subprocess.DEVNULL}  # one "module-info.class ignored" warning per module
    r = run([java, '-Xverify:all', '@' + argfile, '--add-modules', 'ALL-SYSTEM', '-cp', drv,
             'VerifyAll', listing], stdout=subprocess.PIPE, universal_newlines=True, **quiet)
    lines = r.stdout.splitlines()
    print('\n'.join([l for l in lines if not l.startswith('OTHER')][-40:]))
    others = [l for l in lines if l.startswith('OTHER')]
    if r.returncode != 0:
        sys.exit('jdk %s: FAILED' % a.jdk)
    if others:
        # Not the rewriter's doing unless the original image fails differently: compare.
        print('%d classes failed to link for other reasons; comparing with the original image' % len(others))
        b = run([java, '-Xverify:all', '--add-modules', 'ALL-SYSTEM', '-cp', drv, 'VerifyAll', listing],
                stdout=subprocess.PIPE, universal_newlines=True, **quiet)
        base = set(l.split(':')[0] for l in b.stdout.splitlines() if l.startswith('OTHER'))
        new = [l for l in others if l.split(':')[0] not in base]
        if new:
            print('\n'.join(new[:50]))
            sys.exit('jdk %s: classes that link only before rewriting' % a.jdk)
    r = run([java, '-Xverify:all', '@' + argfile, '-cp', drv, 'Workload'], **quiet)
    if r.returncode != 0:
        sys.exit('jdk %s: the workload failed on the rewritten JDK' % a.jdk)
    shutil.rmtree(rw, ignore_errors=True)  # a few hundred MB; the extracted image stays cached
    print('jdk %s: passed' % a.jdk)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    f = sub.add_parser('fixtures')
    c = sub.add_parser('compile')
    for p in (f, c):
        p.add_argument('--release', required=True)
        p.add_argument('--debug', choices=('g', 'none'), default='g')
        p.add_argument('sources', nargs='+')
    c.add_argument('--stamp', required=True)
    c.add_argument('--jdk', required=True)
    c.add_argument('--work', required=True)
    pr = sub.add_parser('probe')
    pr.add_argument('--agent', required=True)
    pr.add_argument('--release', required=True)
    pr.add_argument('--debug', choices=('g', 'none'), default='g')
    pr.add_argument('--options', action='append', default=[])
    pr.add_argument('sources', nargs='+')
    o = sub.add_parser('old')
    o.add_argument('--jar')
    j = sub.add_parser('jdk')
    j.add_argument('--image', help='the image already extracted there (verify.py extract)')
    x = sub.add_parser('extract')
    x.add_argument('--jdk', required=True)
    x.add_argument('--dir', required=True)
    x.add_argument('--stamp', required=True)
    for p in (f, o, j):
        p.add_argument('--tool', required=True)
    for p in (f, o, j, pr):
        p.add_argument('--jdk', required=True)
        p.add_argument('--work', required=True)
    a = ap.parse_args()
    {'fixtures': cmd_fixtures, 'compile': cmd_compile, 'probe': cmd_probe, 'old': cmd_old,
     'jdk': cmd_jdk, 'extract': cmd_extract}[a.cmd](a)


if __name__ == '__main__':
    main()
