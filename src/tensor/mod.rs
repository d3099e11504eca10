//! Host n-dimensional arrays with numpy's dtypes, promotion rules, broadcasting, indexing
//! and printing. The values behind `np.ndarray` and `tf.Tensor`; no language types here.
