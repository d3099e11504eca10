# One Keras source, run unchanged under TensorFlow (`python bench_vs_tf.py ...`) and under
# mirror-kernel (`mirror-kernel exec bench_vs_tf.py ...`) by scripts/bench_vs_tf.sh.
#
#   bench_vs_tf.py MODEL STRATEGY [SAMPLES]
#     MODEL     mlp (Dense 784-128-10) or cnn (Conv32-Pool-Conv64-Pool-Dense10 on 28x28x1)
#     STRATEGY  none, or mirrored (MirroredStrategy on 2 logical CPUs)
#
# Trains 3 epochs on synthetic MNIST-shaped data (batch 128, Adam, sparse categorical
# cross-entropy) and times each epoch with a callback; then times predict (batch 512) 3 times.
# Prints one line: `result model=... strategy=... train=<best samples/s> predict=<best>`.
import sys
import time

import numpy as np
import tensorflow as tf

model_name = sys.argv[1] if len(sys.argv) > 1 else "mlp"
strategy_name = sys.argv[2] if len(sys.argv) > 2 else "none"
default_samples = 60000 if model_name == "mlp" else 12800
samples = int(sys.argv[3]) if len(sys.argv) > 3 else default_samples
batch = 128

if strategy_name == "mirrored":
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    )

np.random.seed(0)
if model_name == "mlp":
    x = np.random.rand(samples, 784).astype("float32")
else:
    x = np.random.rand(samples, 28, 28, 1).astype("float32")
y = np.random.randint(0, 10, size=(samples,))


def build():
    if model_name == "mlp":
        layers = [
            tf.keras.layers.Input(shape=(784,)),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(10, activation="softmax"),
        ]
    else:
        layers = [
            tf.keras.layers.Input(shape=(28, 28, 1)),
            tf.keras.layers.Conv2D(32, (3, 3), activation="relu"),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(10, activation="softmax"),
        ]
    model = tf.keras.Sequential(layers)
    model.compile(
        optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    return model


class EpochTimer(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        times.append(time.perf_counter() - self.start)


times = []
if strategy_name == "mirrored":
    strategy = tf.distribute.MirroredStrategy(["CPU:0", "CPU:1"])
    with strategy.scope():
        model = build()
else:
    model = build()

model.fit(x, y, batch_size=batch, epochs=3, verbose=0, callbacks=[EpochTimer()])
train = samples / min(times)

predict_times = []
for _ in range(3):
    start = time.perf_counter()
    model.predict(x, batch_size=512, verbose=0)
    predict_times.append(time.perf_counter() - start)
predict = samples / min(predict_times)

print(
    f"result model={model_name} strategy={strategy_name} samples={samples} "
    f"train={train:.0f} predict={predict:.0f}"
)
