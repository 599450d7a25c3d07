/* The real morphologies of the shared data, for tests that load every one. */
#ifndef HB_TESTS_TEST_DATA_H
#define HB_TESTS_TEST_DATA_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_MAX_SWC 64
#define TEST_PATH_MAX 1024

static int test_compare_paths(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/*
 * Full paths of dir_path/ *.swc, sorted (readdir's order is unspecified); returns
 * their count, or -1 when the folder cannot be opened.
 */
static inline int test_swc_files_in(const char *dir_path, char paths[TEST_MAX_SWC][TEST_PATH_MAX])
{
    DIR *dir = opendir(dir_path);
    if (!dir) return -1;
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) && n < TEST_MAX_SWC) {
        size_t len = strlen(entry->d_name);
        if (len < 5 || strcmp(entry->d_name + len - 4, ".swc") != 0) continue;
        int written = snprintf(paths[n], TEST_PATH_MAX, "%s/%s", dir_path, entry->d_name);
        if (written > 0 && written < TEST_PATH_MAX) n++; /* a path too long to hold is left out */
    }
    closedir(dir);
    qsort(paths, (size_t)n, TEST_PATH_MAX, test_compare_paths);
    return n;
}

/* The same for HB_DATA_DIR/morphologies, the shared data's real morphologies. */
static inline int test_swc_files(char paths[TEST_MAX_SWC][TEST_PATH_MAX])
{
    char dir_path[TEST_PATH_MAX];
    snprintf(dir_path, sizeof dir_path, "%s/morphologies", HB_DATA_DIR);
    return test_swc_files_in(dir_path, paths);
}

/* The file name part of a path. */
static inline const char *test_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

#endif
