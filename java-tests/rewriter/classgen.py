"""A very small class-file assembler, enough to write test classes javac no longer produces:
class-file versions below 50 (no StackMapTable, checked by the old type-inferencing verifier)
with jsr/ret subroutines, the way javac 1.4 compiled try/finally."""
import struct


class Pool:
    def __init__(self):
        self.entries = []  # serialized entries
        self.index = {}
        self.count = 1

    def _add(self, key, data, slots=1):
        if key in self.index:
            return self.index[key]
        i = self.count
        self.index[key] = i
        self.entries.append(data)
        self.count += slots
        return i

    def utf8(self, s):
        b = s.encode('utf-8')
        return self._add(('utf8', s), struct.pack('>BH', 1, len(b)) + b)

    def cls(self, name):
        return self._add(('class', name), struct.pack('>BH', 7, self.utf8(name)))

    def string(self, s):
        return self._add(('string', s), struct.pack('>BH', 8, self.utf8(s)))

    def integer(self, v):
        return self._add(('int', v), struct.pack('>Bi', 3, v))

    def long(self, v):
        return self._add(('long', v), struct.pack('>Bq', 5, v), 2)

    def nat(self, name, desc):
        return self._add(('nat', name, desc), struct.pack('>BHH', 12, self.utf8(name), self.utf8(desc)))

    def field(self, cls, name, desc):
        return self._add(('field', cls, name, desc),
                         struct.pack('>BHH', 9, self.cls(cls), self.nat(name, desc)))

    def method(self, cls, name, desc):
        return self._add(('method', cls, name, desc),
                         struct.pack('>BHH', 10, self.cls(cls), self.nat(name, desc)))

    def bytes(self):
        return struct.pack('>H', self.count) + b''.join(self.entries)


class Code:
    """Bytecode with symbolic labels; branches are 16-bit (op, label)."""

    def __init__(self):
        self.items = []  # bytes, or ('br', op, label), or ('label', name)

    def op(self, *b):
        self.items.append(bytes(b))
        return self

    def u2op(self, op, v):
        self.items.append(struct.pack('>BH', op, v))
        return self

    def br(self, op, label):
        self.items.append(('br', op, label))
        return self

    def label(self, name):
        self.items.append(('label', name))
        return self

    def assemble(self):
        labels, pos = {}, 0
        for it in self.items:
            if isinstance(it, tuple) and it[0] == 'label':
                labels[it[1]] = pos
            elif isinstance(it, tuple):
                pos += 3
            else:
                pos += len(it)
        out, pos = b'', 0
        for it in self.items:
            if isinstance(it, tuple) and it[0] == 'label':
                continue
            if isinstance(it, tuple):
                out += struct.pack('>Bh', it[1], labels[it[2]] - pos)
                pos += 3
            else:
                out += it
                pos += len(it)
        return out, labels


def method_info(pool, access, name, desc, code, max_stack, max_locals, handlers=(), labels=None):
    ex = b''.join(struct.pack('>HHHH', labels[s], labels[e], labels[h], t) for s, e, h, t in handlers)
    body = struct.pack('>HHI', max_stack, max_locals, len(code)) + code + \
        struct.pack('>H', len(handlers)) + ex + struct.pack('>H', 0)
    return struct.pack('>HHHH', access, pool.utf8(name), pool.utf8(desc), 1) + \
        struct.pack('>HI', pool.utf8('Code'), len(body)) + body


def class_file(pool, major, name, methods, fields=()):
    this, sup = pool.cls(name), pool.cls('java/lang/Object')
    fbytes = b''.join(struct.pack('>HHHH', acc, pool.utf8(n), pool.utf8(d), 0) for acc, n, d in fields)
    head = struct.pack('>IHH', 0xCAFEBABE, 0, major)
    rest = struct.pack('>HHHH', 0x21, this, sup, 0) + struct.pack('>H', len(fields)) + fbytes + \
        struct.pack('>H', len(methods)) + b''.join(methods) + struct.pack('>H', 0)
    return head + pool.bytes() + rest


def jsr_class(major=49, name='Jsr49'):
    """A class whose finally blocks are jsr/ret subroutines, with a run() fixture method."""
    p = Pool()
    counter = p.field(name, 'counter', 'I')
    sb = 'java/lang/StringBuilder'
    methods = []
    # <init>: aload_0; invokespecial Object.<init>; return
    c = Code().op(0x2a).u2op(0xb7, p.method('java/lang/Object', '<init>', '()V')).op(0xb1)
    code, lab = c.assemble()
    methods.append(method_info(p, 0x01, '<init>', '()V', code, 1, 1, (), lab))
    # static int sub(int x): try { x *= 2; if (x > 10) return x; if (x == 4) throw ...; }
    #                        finally { counter++; }   return x + 1;
    c = Code()
    c.label('start').op(0x1a).op(0x05).op(0x68).op(0x3b)          # x = x * 2
    c.op(0x1a).op(0x10, 10).br(0xa4, 'small')                      # if (x <= 10) goto small
    c.op(0x1a).op(0x3c).br(0xa8, 'fin').op(0x1b).op(0xac)          # r = x; jsr fin; return r
    c.label('small').op(0x1a).op(0x07).br(0xa0, 'ok')              # if (x != 4) goto ok
    c.u2op(0xbb, p.cls('java/lang/IllegalStateException')).op(0x59)
    c.u2op(0x12 if False else 0x13, p.string('four'))             # ldc_w "four"
    c.u2op(0xb7, p.method('java/lang/IllegalStateException', '<init>', '(Ljava/lang/String;)V'))
    c.op(0xbf)                                                      # athrow
    c.label('ok').br(0xa8, 'fin').br(0xa7, 'end')                 # jsr fin; goto end
    c.label('handler').op(0x4d).br(0xa8, 'fin').op(0x2c).op(0xbf)  # astore_2; jsr fin; aload_2; athrow
    c.label('fin').op(0x4e).u2op(0xb2, counter).op(0x04).op(0x60).u2op(0xb3, counter)
    c.op(0xa9, 3)                                                   # ret 3
    c.label('end').op(0x1a).op(0x04).op(0x60).op(0xac)             # return x + 1
    code, lab = c.assemble()
    methods.append(method_info(p, 0x09, 'sub', '(I)I', code, 3, 4, [('start', 'handler', 'handler', 0)], lab))
    # public static String run(): "" + sub(1) + "," + sub(8) + "," + (sub(2) throws) + "," + counter
    app_s = p.method(sb, 'append', '(Ljava/lang/String;)Ljava/lang/StringBuilder;')
    app_i = p.method(sb, 'append', '(I)Ljava/lang/StringBuilder;')
    sub = p.method(name, 'sub', '(I)I')
    comma = p.string(',')
    c = Code()
    c.u2op(0xbb, p.cls(sb)).op(0x59).u2op(0xb7, p.method(sb, '<init>', '()V')).op(0x4b)  # astore_0
    for arg in (1, 8):
        c.op(0x2a).op(0x10, arg).u2op(0xb8, sub).u2op(0xb6, app_i).u2op(0x13, comma).u2op(0xb6, app_s).op(0x57)
    c.label('try').op(0x2a).op(0x05).u2op(0xb8, sub).u2op(0xb6, app_i).op(0x57).label('tryend').br(0xa7, 'after')
    c.label('catch').op(0x4c).op(0x2a).u2op(0x13, p.string('caught')).u2op(0xb6, app_s).op(0x57)
    c.label('after').op(0x2a).u2op(0x13, comma).u2op(0xb6, app_s).u2op(0xb2, counter).u2op(0xb6, app_i)
    c.u2op(0xb6, p.method(sb, 'toString', '()Ljava/lang/String;')).op(0xb0)
    code, lab = c.assemble()
    methods.append(method_info(p, 0x09, 'run', '()Ljava/lang/String;', code, 3, 2,
                               [('try', 'tryend', 'catch', p.cls('java/lang/IllegalStateException'))], lab))
    return class_file(p, major, name, methods, fields=[(0x09, 'counter', 'I')])
