//! What the inline programs' words allow and name.
use super::*;

#[test]
fn everyday_one_liners_read() {
    for (lang, code) in [
        ("python", "print(1)"),
        ("python", "import sys; print(sys.version)"),
        (
            "python",
            "import json,sys; print(json.load(sys.stdin)['version'])",
        ),
        ("python", "for i in range(3): print(i * 2)"),
        (
            "python",
            "x = [a for a in range(5) if a % 2]; print(sum(x))",
        ),
        (
            "python",
            "import datetime; print(datetime.datetime.now().isoformat())",
        ),
        ("python", "print(f'{2**10} bytes')"),
        (
            "python",
            "import json,sys; print(json.load(sys.stdin)['name'])",
        ),
        ("python", "d = {'a': 1}; print(d['a'])"),
        ("node", "console.log(process.env.HOME, process.env['PATH'])"),
        ("ruby", "puts ENV['HOME']"),
        ("python", "import os; print(os.environ.get('HOME'))"),
        ("node", "console.log(process.version)"),
        ("node", "1+1"),
        ("node", "console.log(require('./package.json').version)"),
        (
            "node",
            "const x = [1,2,3].map(n => n * 2); console.log(JSON.stringify(x))",
        ),
        ("perl", "print \"hi\\n\""),
        ("perl", "s/foo/bar/g"),
        ("perl", "print if /foo|bar/"),
        ("perl", "s{a}{b}gi; tr/a-z/A-Z/"),
        ("perl", "my @f = split /,/; print $f[0]"),
        ("ruby", "puts 1 + 1"),
        ("ruby", "[1,2].each { |x| puts x }"),
        ("php", "echo PHP_VERSION;"),
        ("lua", "print(string.format('%d', 3))"),
        ("python", "import os; print(os.getcwd())"),
        ("python", "import os, sys; print(os.path.join('a', 'b'))"),
        (
            "python",
            "import subprocess; print(subprocess.check_output(['git', 'status']))",
        ),
        (
            "python",
            "import subprocess; subprocess.run(['ls'], check=True, capture_output=True)",
        ),
        ("python", "import os; os.system('ls')"),
        (
            "node",
            "require('child_process').execSync('ls', {stdio: 'inherit'})",
        ),
        ("perl", "system \"ls\";"),
    ] {
        assert_eq!(unread_word(lang, code), None, "{lang}: {code}");
    }
}

#[test]
fn what_is_not_known_is_named() {
    for (lang, code) in [
        ("python", "import os; c='rm -rf ~'; os.system(c)"),
        ("python", "import subprocess as s; s.run(c, shell=True)"),
        (
            "python",
            "system=modules=0; sys.modules.get('o'+'s').system('x')",
        ),
        ("python", "__import__('os').system('x')"),
        ("python", "getattr(sys, 'modules')"),
        ("python", "open('/etc/x', 'w').write('')"),
        ("python", "print(f'{__import__(\"os\").system(\"x\")}')"),
        ("python", "sys.modules['os']"),
        ("python", "eval(input())"),
        ("node", "require('child_process').execSync(c)"),
        ("node", "const {execSync} = require('child' + '_process')"),
        ("node", "process['kill'](1)"),
        ("node", "process.binding('spawn_sync')"),
        ("node", "this.constructor.constructor('return process')()"),
        ("node", "console.log(`${require('fs').readdirSync('/')}`)"),
        ("perl", "s/x/system('id')/e"),
        ("perl", "print qx(id)"),
        ("perl", "my $f = \\&CORE::system; &$f('id')"),
        ("perl", "/(?{ system('id') })/"),
        ("ruby", "open('|id')"),
        ("ruby", "Kernel.send(:system, 'id')"),
        ("php", "$f = 'system'; $f('id');"),
        ("lua", "os.execute('id')"),
        ("python", "import os; os.remove('/etc/x')"),
        ("python", "import os; os.replace('a', '/etc/passwd')"),
        ("python", "import os as o; o.remove('x')"),
        ("python", "from os import remove; remove('x')"),
        ("python", "import os; [os][0].remove('x')"),
        ("python", "import os; os.system('ls ' + c)"),
        ("python", "import subprocess; subprocess.run(c, shell=True)"),
        ("python", "import subprocess; subprocess.Popen(['ls'])"),
        ("node", "const cp = require('child_process'); cp.exec(c)"),
        ("lua", "io.popen(c)"),
        (
            "node",
            "const {execSync: e} = require('child_process'); e(c)",
        ),
        (
            "python",
            "import os; os.environ['LD_PRELOAD'] = 'x.so'; os.system('ls')",
        ),
        ("python", "import os; os.environ.update(LD_PRELOAD='x.so')"),
        ("node", "process.env.NODE_OPTIONS = '--require x'"),
        ("lua", "load(\"os.execute('id')\")()"),
        ("perl", "do '/tmp/x.pl'"),
        ("ruby", "load '/tmp/x.rb'"),
    ] {
        assert!(unread_word(lang, code).is_some(), "{lang}: {code}");
    }
}
