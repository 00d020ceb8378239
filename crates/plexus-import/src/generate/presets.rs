//! Presets: R-MAT graphs with the vertex and edge counts of the data sets used in published graph-database
//! write-ups, so benchmarks can run at their size without the original files.
//!
//! Each preset draws R-MAT edges on exactly its vertex count (see [`Rmat`]: drawn at `ceil(log2(n))` levels,
//! relabelled, out-of-range endpoints redrawn), without self-loops, and multiplies both counts by `scale`, which
//! keeps the average degree. What is *not* reproduced, for all of them:
//!
//! * Duplicate edges are kept: removing them would need the whole edge set or a sort, and the importer has to
//!   cope with duplicates in real files anyway. Each [`Preset`] quotes the measured share.
//! * R-MAT leaves some ids without any edge, so an importer that creates nodes from edges sees fewer nodes than
//!   `nodes` (the real data sets have none isolated), and a correspondingly higher average degree.
//! * Edges are directed pairs. The two undirected originals (genes, brain) list each edge once, as here.

use super::rmat::{Initiator, Rmat};
use super::Error;

/// A data-set-shaped graph.
///
/// Shapes below are measured at scale 1 with seed 42 by the ignored test `preset_shape_report` (degrees count
/// both ends of an edge; "isolated" ids have no edge at all). The initiators were chosen with that test: Graph500's
/// own (0.57/0.19/0.19/0.05) is far too skewed for all three (on patents: 60% of ids isolated and a hub of 87,663;
/// on mouse-genes: 43% duplicate edges and a hub touching 537,437 edges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// The US patent citation graph (cit-Patents): 3,774,768 patents, 16,518,948 citations, average degree 8.75.
    /// Initiator 0.42/0.21/0.21/0.16 gives largest out- and in-degrees of 655 and 699 (the real graph: 770 and
    /// 779), median degree 4, 12.6% of ids isolated (real: none) and no measurable duplicates. Unlike citations,
    /// edges can point both ways between two patents and form cycles (no time order is modelled).
    Patents,
    /// A mouse gene co-expression network: about 43,000 genes, 14.5 million links, average degree about 670:
    /// dense. Initiator 0.40/0.20/0.20/0.20: largest degree 12,378, median 489, no isolated id, 2.2% duplicate
    /// edges. Co-expression networks have dense modules that R-MAT does not reproduce.
    MouseGenes,
    /// A human connectome (voxel-level brain network): about 940,000 vertices, 87.3 million edges, average degree
    /// about 186. Initiator 0.45/0.20/0.20/0.15: largest degree 19,187, median 72, 0.2% of ids isolated, 0.25%
    /// duplicate edges. Brain networks are spatially embedded (neighbouring voxels link); no locality is modelled.
    HumanBrain,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Patents, Preset::MouseGenes, Preset::HumanBrain];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Patents => "patents",
            Preset::MouseGenes => "mouse-genes",
            Preset::HumanBrain => "human-brain",
        }
    }

    /// Vertices and edges at scale 1.
    pub fn counts(self) -> (u64, u64) {
        match self {
            Preset::Patents => (3_774_768, 16_518_948),
            Preset::MouseGenes => (43_000, 14_500_000),
            Preset::HumanBrain => (940_000, 87_300_000),
        }
    }

    fn initiator(self) -> Initiator {
        match self {
            Preset::Patents => Initiator { a: 0.42, b: 0.21, c: 0.21, d: 0.16 },
            Preset::MouseGenes => Initiator { a: 0.40, b: 0.20, c: 0.20, d: 0.20 },
            Preset::HumanBrain => Initiator { a: 0.45, b: 0.20, c: 0.20, d: 0.15 },
        }
    }

    /// The R-MAT parameters at `scale` times the data set's counts.
    pub fn rmat(self, scale: f64) -> Result<Rmat, Error> {
        if !scale.is_finite() || scale <= 0.0 || scale > 1000.0 {
            return Err(Error::Invalid(format!("--scale must be greater than 0 and at most 1000, got {scale}")));
        }
        let (n, m) = self.counts();
        let (nodes, edges) = ((n as f64 * scale).round() as u64, (m as f64 * scale).round() as u64);
        if nodes < 2 || edges < 1 {
            return Err(Error::Invalid(format!(
                "--scale {scale} leaves {nodes} nodes and {edges} edges for {}: at least 2 nodes and 1 edge needed",
                self.name()
            )));
        }
        Ok(Rmat { nodes, edges, initiator: self.initiator(), noise: 0.0, no_self_loops: true })
    }
}
