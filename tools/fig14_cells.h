/*
 * The paper's Figure 14 cells (hines-gpu-ogst2018, section 4): binary trees of
 * 2, 3 or 4 levels, a first branch of 256 rows, then level k (k >= 1) of 2^k
 * branches of second / 2^(k-1) rows, second = 128, 64, 32: 512, 512 and 448
 * rows (512 cannot be kept with 4 halving levels; 448 is the paper's example).
 * Header-only: `bench multi` and the mixed-morphology tests share it.
 */
#ifndef HB_TOOLS_FIG14_CELLS_H
#define HB_TOOLS_FIG14_CELLS_H

/* Rows of a level-1 branch for a tree of `levels` levels (2..4), 0 otherwise. */
static inline int fig14_second_rows(int levels)
{
    static const int second[] = {0, 0, 128, 64, 32};
    return levels >= 2 && levels <= 4 ? second[levels] : 0;
}

/* Rows of the whole cell. */
static inline int fig14_rows(int levels)
{
    int m = 256;
    for (int k = 1; k < levels; ++k) m += (1 << k) * (fig14_second_rows(levels) >> (k - 1));
    return m;
}

/* Parents of the branch at `level` (rows rows, hung from node `up`) and of its subtree,
 * numbered from `next` in Hines order; returns the next free node. */
static inline int fig14_branch(int *parent, int next, int up, int rows, int level, int levels,
                               int second)
{
    for (int r = 0; r < rows; ++r) {
        parent[next] = up;
        up = next++;
    }
    if (level + 1 < levels)
        for (int k = 0; k < 2; ++k)
            next = fig14_branch(parent, next, up, level == 0 ? second : rows / 2, level + 1,
                                levels, second);
    return next;
}

/* The parent array of a cell of `levels` levels (fig14_rows(levels) entries); returns the
 * nodes written, which is fig14_rows(levels). */
static inline int fig14_parents(int *parent, int levels)
{
    return fig14_branch(parent, 0, -1, 256, 0, levels, fig14_second_rows(levels));
}

#endif
