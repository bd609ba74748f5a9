//! Message trees rebuilt from parent links (Claude `parent_message_uuid`, Grok
//! `parent_response_id`): children lists, the active path from a chosen leaf, and a pre-order
//! walk with an explicit stack, so deep or cyclic trees never recurse or loop.

use crate::model::Micros;

/// A forest over positions `0..len`, from each position's parent.
pub struct Tree {
    /// Parent of each position (`None` for roots).
    pub parents: Vec<Option<usize>>,
    /// Children of each position, in position order.
    pub children: Vec<Vec<usize>>,
}

impl Tree {
    /// Builds the children lists from `parents`.
    pub fn new(parents: Vec<Option<usize>>) -> Self {
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); parents.len()];
        for (position, parent) in parents.iter().enumerate() {
            if let Some(parent) = parent {
                children[*parent].push(position);
            }
        }
        Tree { parents, children }
    }

    /// The newest leaf by `times`; ties (and missing times) go to the later position. When
    /// every position has a child (a damaged export, its parents in a cycle), the newest
    /// position: with no leaf, nothing would be on the active path and every message would be
    /// skipped as off it.
    pub fn newest_leaf(&self, times: &[Option<Micros>]) -> Option<usize> {
        let newest = |positions: &mut dyn Iterator<Item = usize>| {
            let mut best: Option<usize> = None;
            for position in positions {
                if best.is_none_or(|best| times[position].unwrap_or(Micros::MIN) >= times[best].unwrap_or(Micros::MIN)) {
                    best = Some(position);
                }
            }
            best
        };
        newest(&mut (0..self.parents.len()).filter(|&position| self.children[position].is_empty()))
            .or_else(|| newest(&mut (0..self.parents.len())))
    }

    /// Marks `leaf` and its ancestors (stopping at a cycle).
    pub fn path_to(&self, leaf: Option<usize>) -> Vec<bool> {
        let mut on_path = vec![false; self.parents.len()];
        let mut cursor = leaf;
        while let Some(position) = cursor {
            if on_path[position] {
                break;
            }
            on_path[position] = true;
            cursor = self.parents[position];
        }
        on_path
    }

    /// Pre-order: roots in position order, children in the order `children` lists them;
    /// positions only reachable through a cycle come after, so every position appears once.
    pub fn preorder(&self) -> Vec<usize> {
        let count = self.parents.len();
        let mut order = Vec::with_capacity(count);
        let mut visited = vec![false; count];
        let roots = (0..count).filter(|&position| self.parents[position].is_none());
        for start in roots.chain(0..count) {
            if visited[start] {
                continue;
            }
            let mut stack = vec![start];
            while let Some(position) = stack.pop() {
                if visited[position] {
                    continue;
                }
                visited[position] = true;
                order.push(position);
                stack.extend(self.children[position].iter().rev().filter(|&&child| !visited[child]));
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_leaf_path_and_preorder() {
        // 0 ← 1 ← 2, 0 ← 3; 4 and 5 form a cycle.
        let tree = Tree::new(vec![None, Some(0), Some(1), Some(0), Some(5), Some(4)]);
        let times = [Some(1), Some(2), Some(3), Some(9), None, None];
        assert_eq!(tree.newest_leaf(&times), Some(3));
        assert_eq!(tree.path_to(Some(3)), vec![true, false, false, true, false, false]);
        assert_eq!(tree.preorder(), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_tree_whose_every_position_is_in_a_cycle_keeps_the_newest_positions_thread() {
        // 0 → 1 → 2 → 0: no root and no leaf.
        let tree = Tree::new(vec![Some(2), Some(0), Some(1)]);
        let times = [Some(1), Some(3), Some(2)];
        assert_eq!(tree.newest_leaf(&times), Some(1));
        assert_eq!(tree.path_to(Some(1)), vec![true, true, true]);
    }
}
