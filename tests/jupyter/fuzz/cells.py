# The fuzz corpus: typical notebook cells, separated by lines `# %%`. test_fuzz.py runs
# them once as they are, then mutates them (numbers, strings, brackets, operators, format
# specs, splices) with a fixed seed. Keep every cell quick: data is small, loops are short.
x = 3
y = x * 7 + 2 ** 5 - 10 // 3 % 4
print(x, y, -x, abs(-y), divmod(y, x))
# %%
name = "mirror"
print(f"{name!r:>12} {y:08.3f} {x:+d} {0.25:.1%} {1234567:,}")
# %%
s = "Hello, World"
print(s.upper(), s.lower(), s[::-1], s[2:8], s.split(", "), s.find("World"))
# %%
print("-".join(["a", "b", "c"]), "x".center(9, "*"), "7".zfill(4), "a\tb".expandtabs(4))
# %%
print("%s has %d items costing %.2f" % ("cart", 3, 9.5), "%5s|%-5s|%05d|%x" % ("a", "b", 42, 255))
# %%
print("{} and {}".format("x", "y"), "{:>6.2f}|{:<4}|{:^5}".format(3.14159, "ab", "c"))
# %%
nums = [5, 3, 8, 1, 9, 2]
nums.sort()
print(nums, sorted(nums, reverse=True), max(nums), min(nums), sum(nums), len(nums))
# %%
squares = [n * n for n in range(10) if n % 2 == 0]
pairs = {k: v for k, v in zip("abc", range(3))}
uniq = {c for c in "mississippi"}
print(squares, pairs, sorted(uniq))
# %%
d = {"a": 1, "b": [1, 2, 3], "c": {"d": (4, 5)}}
d["e"] = d.get("f", 0) + 1
print(d, list(d.keys()), d["c"]["d"][1])
# %%
t = (1, "two", 3.0, None, True)
a, *rest = t
print(a, rest, t.index(3.0), t.count(None), t[1:3])
# %%
nested = [[1, 2], [3, [4, 5]], []]
nested.append(nested[0])
print(nested, nested == nested, [1, 2] in nested)
# %%
def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
print([fib(i) for i in range(15)])
# %%
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)
print(fact(10), fact(20))
# %%
def greet(name, greeting="Hello", *args, **kwargs):
    return f"{greeting}, {name}! {args} {sorted(kwargs)}"
print(greet("Ada"), greet("Bob", "Hi", 1, 2, z=3, y=4))
# %%
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def __repr__(self):
        return f"Point({self.x}, {self.y})"
    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)
    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)
p = Point(1, 2) + Point(3, 4)
print(p, p == Point(4, 6), [p, p])
# %%
class Stack:
    def __init__(self):
        self.items = []
    def push(self, v):
        self.items.append(v)
        return self
    def pop(self):
        return self.items.pop()
    def __len__(self):
        return len(self.items)
st = Stack().push(1).push(2).push(3)
print(len(st), st.pop(), len(st))
# %%
class MyError(ValueError):
    pass
try:
    raise MyError("bad value")
except ValueError as e:
    print(type(e).__name__, e)
finally:
    print("done")
# %%
try:
    [1, 2, 3][10]
except IndexError as e:
    print("caught", e)
# %%
def gen(n):
    for i in range(n):
        yield i * i
print(list(gen(6)), sum(gen(100)), next(gen(3)))
# %%
words = "the quick brown fox jumps over the lazy dog the end".split()
counts = {}
for w in words:
    counts[w] = counts.get(w, 0) + 1
print(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
# %%
import math
print(math.sqrt(16), math.pi, math.floor(2.7), math.isnan(float("nan")), math.log(100, 10))
# %%
import time
start = time.perf_counter()
total = 0
for i in range(1000):
    total += i
print(total, time.perf_counter() >= start)
# %%
i = 0
while i < 50:
    i += 3
    if i % 7 == 0:
        continue
    if i > 40:
        break
print(i)
# %%
matrix = [[i * 3 + j for j in range(3)] for i in range(3)]
transposed = list(map(list, zip(*matrix)))
print(matrix, transposed, [row[::-1] for row in matrix])
# %%
print(round(2.675, 2), round(12345, -2), round(0.5), int("42"), float("1e3"), str(1.5))
# %%
print(hex(255), bin(10), oct(8), chr(65), ord("a"), isinstance(3, int), type(3.0).__name__)
# %%
import numpy as np
arr = np.arange(12).reshape(3, 4)
print(arr, arr.shape, arr.sum(), arr.mean(axis=0), arr[1:, ::2])
# %%
a = np.array([[1.0, 2.0], [3.0, 4.0]])
b = np.ones((2, 2))
print(a @ b, a * 2 + b, a.T, np.maximum(a, 2.5))
# %%
z = np.zeros((4, 3), dtype="float32")
z[1:3] = 7
print(z, z.dtype, z.astype("int64").sum(), np.where(z > 0, 1, -1))
# %%
np.random.seed(0)
r = np.random.rand(5)
print(r.round(3), np.sort(r)[:2], r.argmax(), np.linspace(0, 1, 5))
# %%
v = np.array([3, 1, 2])
print(v[v > 1], v.tolist(), np.concatenate([v, v]), np.stack([v, v]).shape)
# %%
import tensorflow as tf
c = tf.constant([[1.0, 2.0], [3.0, 4.0]])
print(c, c.shape, tf.reduce_sum(c), tf.matmul(c, c))
# %%
v = tf.Variable([1.0, 2.0, 3.0])
v.assign_add([1.0, 1.0, 1.0])
print(v.numpy(), tf.reshape(v, (3, 1)).shape, tf.zeros((2, 3)), tf.ones([2]))
# %%
model = tf.keras.Sequential([
    tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
    tf.keras.layers.Dense(3, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
print(model.count_params(), model.output_shape)
# %%
model.summary()
# %%
X = np.random.rand(64, 4).astype("float32")
Y = (X[:, 0] > 0.5).astype("int64")
h = model.fit(X, Y, epochs=2, batch_size=16, verbose=0)
print(sorted(h.history), len(h.history["loss"]))
# %%
print(model.predict(X[:3], verbose=0).shape, model.evaluate(X, Y, verbose=0)[0] >= 0)
# %%
conv = tf.keras.Sequential([
    tf.keras.Input((8, 8, 1)),
    tf.keras.layers.Conv2D(4, 3, activation="relu"),
    tf.keras.layers.MaxPooling2D(2),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(2),
])
print(conv.count_params(), conv.output_shape)
# %%
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    m2 = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    m2.compile(optimizer="sgd", loss="mse")
print(strategy.num_replicas_in_sync, m2.fit(np.ones((8, 3)), np.zeros((8, 2)), epochs=1, verbose=0).history["loss"][0] >= 0)
# %%
small = tf.keras.Sequential([tf.keras.layers.Dense(5, input_shape=(7,))])
out = small(tf.ones((2, 7)))
print(out.shape, len(small.weights), small.weights[0].shape)
# %%
%time sum(range(1000))
# %%
from IPython.display import display
display({"a": 1})
display([1, 2, 3])
# %%
print(list(enumerate("abc", 1)), list(reversed([1, 2, 3])), any([0, 1]), all([]))
# %%
s = set([1, 2, 3])
s.add(4)
s |= {5}
print(s & {1, 5, 9}, s - {1}, s ^ {1, 10}, 3 in s, frozenset([1, 2]))
# %%
lst = list(range(10))
lst[2:5] = ["a", "b"]
del lst[0]
lst.insert(0, "z")
print(lst, lst[-1], lst[-3:], lst.index("a"))
# %%
text = """line one
line two
line three"""
for n, line in enumerate(text.splitlines()):
    print(n, line.title(), line.replace("line", "row"), line.startswith("line"))
# %%
values = [3.14159, 2.71828, 1.41421]
print(["{:.2f}".format(v) for v in values], [f"{v:10.4e}" for v in values], "%g" % values[0])
# %%
data = {"x": [1, 2], "y": [3, 4]}
rows = [dict(zip(data, col)) for col in zip(*data.values())]
print(rows, sorted(data, key=len), list(map(str, range(3))))
# %%
f = lambda a, b=2: a ** b
print(f(3), f(2, 10), (lambda *a: a)(1, 2), sorted([(2, "b"), (1, "a")]))
# %%
x = 10
def outer():
    x = 1
    def inner():
        nonlocal x
        x += 1
        return x
    return inner()
print(outer(), x)
# %%
import os
print(os.path.join("a", "b"), os.path.basename("/tmp/x.txt"), os.path.splitext("f.tar.gz"))
# %%
result = [i for i in range(20) if all(i % d for d in range(2, i))][2:]
print(result)
# %%
print(1e-5, 1e16, 0.1 + 0.2, 2 ** 0.5, 7 / 2, 7 // 2, -7 // 2, -7 % 3, 1 / 3)
# %%
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [4, 1, 9])
plt.title("small")
plt.show()
# %%
e = np.eye(4)
print(np.full((2, 3), 7), np.linspace(0, 1, 5), np.arange(0, 10, 2), e[1:3, ::2], np.identity(2))
# %%
m = np.arange(24).reshape(2, 3, 4)
print(m.sum(axis=2), m.transpose(2, 0, 1).shape, np.expand_dims(m, 0).shape, m.ravel()[5:9], np.squeeze(m[:1]).shape)
# %%
q = np.array([4.0, -1.0, 9.0, 0.25])
print(np.sqrt(np.abs(q)), np.clip(q, 0, 5), np.round(q, 1), np.cumsum(q), np.sort(q), np.argsort(q), np.unique([3, 1, 3]))
# %%
w = np.random.randn(6, 3)
print(w.std() > 0, np.var(w, axis=0).shape, np.isfinite(w).all(), np.where(w > 0)[0][:2], np.count_nonzero(w > 10))
# %%
print(np.zeros(3, dtype="int32"), np.ones((2, 2), dtype="uint8") * 200, np.empty(0).shape, np.hstack([[1], [2]]), np.vstack([[1, 2], [3, 4]]))
# %%
g = np.arange(10.0)
g[3:7] = -1
print(g[g < 0].size, g[-3:], g[::3], g.reshape(-1, 5), np.amax(g), np.mean(g), np.prod(g[1:4]))
# %%
print(tf.fill([2, 3], 1.5), tf.range(5), tf.reshape(tf.range(6), (2, 3)), tf.transpose(tf.ones((2, 3))).shape)
# %%
u = tf.constant([3.0, 1.0, 2.0])
print(tf.reduce_max(u), tf.argmax(u), tf.square(u), tf.cast(u, tf.int32), tf.concat([u, u], 0), tf.stack([u, u]).shape)
# %%
print(tf.expand_dims(u, 1).shape, tf.squeeze(tf.ones((1, 3, 1))).shape, tf.nn.softmax(u), tf.math.log(u + 1), tf.zeros_like(u))
# %%
seq = tf.keras.Sequential([
    tf.keras.Input((6,)),
    tf.keras.layers.Reshape((2, 3)),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dropout(0.5),
    tf.keras.layers.Dense(4, activation="tanh"),
    tf.keras.layers.Activation("relu"),
    tf.keras.layers.Softmax(),
])
print(seq.output_shape, seq.count_params())
# %%
cnn = tf.keras.Sequential([
    tf.keras.Input((12, 12, 2)),
    tf.keras.layers.Conv2D(3, (3, 3), strides=(2, 2), padding="same"),
    tf.keras.layers.MaxPooling2D((2, 2), strides=1),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(2),
])
print(cnn.output_shape, cnn.count_params(), cnn.predict(np.zeros((2, 12, 12, 2)), verbose=0).shape)
# %%
print("abc".center(7), "abc".ljust(5, "-"), "abc".rjust(6), "x".zfill(3), "ab" * 3, "abc"[1:10:2], "abcdef"[-4:-1])
# %%
print("a,b,,c".split(",", 2), "a b c".rsplit(None, 1), "aaa".replace("a", "bb", 2), "Hello".count("l"), "tab\there".expandtabs(2))
# %%
r = range(2, 50, 3)
print(len(r), r[4], r[-1], list(r[1:5]), 11 in r, r.index(8) if hasattr(r, "index") else None)
# %%
big = list(range(100))
print(big[10:90:7], big[-5:], big[::-25], sum(big[::2]), big.index(42), big.count(7))
