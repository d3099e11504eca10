//! Runs notebooks (`mirror-kernel run NB.ipynb`) and scripts (`mirror-kernel exec F.py`)
//! with the embedded engine and no Jupyter: cells go through the same [`Session`] the
//! kernel uses, and outputs are written back as nbformat 4.5.
//!
//! [`Session`]: crate::session::Session
