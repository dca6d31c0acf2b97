// A progressive JPEG's coefficients kept compactly while libjpeg-turbo decodes it at a
// reduced DCT scale (declared in JPEGInternal.h).
//
// libjpeg-turbo keeps every DCT coefficient of a progressive JPEG, 2 bytes each, until
// its last scan: 72 MB for a 12 MP photo at 4:4:4, 36 MB at 4:2:0, at any scale. At a
// scale of N/8 its inverse DCT reads only some of a block's 64 coefficients (the
// top-left N x N for N = 3, 5, 6, 7; 5 and 7 of the 8 rows and columns for the reduced
// 2x2 and 4x4 transforms; just the DC at 1/8). The entropy decoder still has to know,
// for every coefficient, whether it is zero (a refinement scan's bits are read
// differently for coefficients already non-zero), but not its value. So each block is
// stored as the values the transform reads plus one bit a coefficient for the others:
// 26 bytes instead of 128 for a 4:4:4 block at 3/8 (a 12 MP photo's 72 MB become 15).
//
// It plugs into libjpeg's documented memory-manager interface (jpeg_memory_mgr's
// virtual block arrays): the decoder asks for a few block rows at a time, which are
// unpacked into a small window of whole blocks and packed back when it moves on.
// While the scans are read, the other coefficients unpack as 1 (any non-zero value
// serves: the decoder only tests them against zero or adds a correction bit of the
// same sign, which keeps them non-zero); for the output pass they unpack as 0, so a
// transform that reads more than the set below would give a different picture, which
// the test comparing both decodes pixel for pixel would catch.
#include "JPEGInternal.h"
#include "TestCounters.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <jerror.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The row or column indices of a block the inverse DCT producing `size` x `size`
// pixels reads (libjpeg-turbo's jddctmgr.c: jidctred.c's 1x1, 2x2 and 4x4 transforms,
// jidctint.c's others; 8 and more read the whole block). Returns how many.
static int cvipsshim_idct_lines(int size, int lines[8]) {
    static const int reduced2[] = { 0, 1, 3, 5, 7 }, reduced4[] = { 0, 1, 2, 3, 5, 6, 7 };
    int count = 0;
    if (size == 2) { for (int i = 0; i < 5; i++) lines[count++] = reduced2[i]; return count; }
    if (size == 4) { for (int i = 0; i < 7; i++) lines[count++] = reduced4[i]; return count; }
    int n = size >= 8 || size < 1 ? 8 : size;
    for (int i = 0; i < n; i++) lines[count++] = i;
    return count;
}

// The block positions (natural order) a component's transform reads, as a mask.
static uint64_t cvipsshim_idct_positions(int scaledSize) {
    int lines[8];
    int count = cvipsshim_idct_lines(scaledSize, lines);
    uint64_t mask = 0;
    for (int r = 0; r < count; r++)
        for (int c = 0; c < count; c++) mask |= (uint64_t) 1 << (lines[r] * 8 + lines[c]);
    return mask;
}

// Whether keeping a component compactly saves anything: a component whose transform
// reads all 64 coefficients (8/8, and chroma decoded at twice luma's scale) stays in
// libjpeg's own array, where packing would only cost CPU. One that reads 49 (4x4, 7x7)
// saves little (106 bytes a block instead of 128) but is kept compactly: a 6 MP 4:2:0
// photo at 4/8 then fits beside a 12 MP HEIC in the decode budget (measured:
// docs/performance-notes.md, "Two large decodes at once").
static int cvipsshim_worth_compacting(uint64_t kept) {
    return __builtin_popcountll(kept) < 64;
}

static size_t cvipsshim_block_bytes(uint64_t kept) {
    int n = __builtin_popcountll(kept);
    return cvipsshim_worth_compacting(kept) ? (size_t) n * sizeof(JCOEF) + sizeof(uint64_t) : sizeof(JBLOCK);
}

long long cvipsshim_jpeg_compact_bytes(j_decompress_ptr info, int compact) {
    long long total = 0;
    for (int c = 0; c < info->num_components; c++) {
        jpeg_component_info *component = &info->comp_info[c];
        long long columns = (component->width_in_blocks + component->h_samp_factor - 1)
            / component->h_samp_factor * component->h_samp_factor;
        long long rows = (component->height_in_blocks + component->v_samp_factor - 1)
            / component->v_samp_factor * component->v_samp_factor;
        // The stored blocks, and the window of whole blocks the decoder works in (up to
        // five iMCU rows: libjpeg asks for room for block smoothing).
        uint64_t kept = compact ? cvipsshim_idct_positions(component->DCT_scaled_size) : ~(uint64_t) 0;
        total += columns * rows * (long long) cvipsshim_block_bytes(kept);
        if (cvipsshim_worth_compacting(kept)) total += columns * component->v_samp_factor * 5 * (long long) sizeof(JBLOCK);
    }
    return total;
}

struct cvipsshim_block_array {
    JDIMENSION columns, rows, maxAccess;
    uint64_t kept;            // positions stored as values
    int keptCount;
    int scaledSize;           // the component's transform size: which positions are kept
    unsigned char keptIndex[64];
    JCOEF *values;            // rows * columns * keptCount
    uint64_t *others;         // rows * columns: which of the other positions are non-zero
    JBLOCKROW block;          // the window: maxAccess rows of whole blocks
    JBLOCKARRAY windowRows;
    JDIMENSION windowStart, windowCount;
    // What the window holds: for a scan, every kept position and the scan's band (the
    // positions it reads and writes; no other position is meaningful), or, for the
    // output pass, the kept positions with every other one 0.
    int windowForOutput;
    uint64_t windowBand;
    int dirty;
};

#define CVIPSSHIM_MAX_ARRAYS 4

struct cvipsshim_coefficient_store {
    // libjpeg's own methods, for everything but our arrays.
    jvirt_barray_ptr (*request)(j_common_ptr, int, boolean, JDIMENSION, JDIMENSION, JDIMENSION);
    void (*realize)(j_common_ptr);
    JBLOCKARRAY (*access)(j_common_ptr, jvirt_barray_ptr, JDIMENSION, JDIMENSION, boolean);
    void (*freePool)(j_common_ptr, int);
    void (*selfDestruct)(j_common_ptr);
    int requests;             // arrays libjpeg has asked for (one per component, in order)
    int count;                // of them, ours
    struct cvipsshim_block_array arrays[CVIPSSHIM_MAX_ARRAYS];
};

static struct cvipsshim_coefficient_store *cvipsshim_store_of(j_common_ptr info) {
    return (struct cvipsshim_coefficient_store *) info->client_data;
}

static struct cvipsshim_block_array *cvipsshim_array_of(struct cvipsshim_coefficient_store *store, jvirt_barray_ptr pointer) {
    for (int i = 0; i < store->count; i++)
        if ((jvirt_barray_ptr) &store->arrays[i] == pointer) return &store->arrays[i];
    return NULL;
}

static void cvipsshim_array_release(struct cvipsshim_block_array *array) {
    free(array->values);
    free(array->others);
    free(array->block);
    free(array->windowRows);
    array->values = NULL;
    array->others = NULL;
    array->block = NULL;
    array->windowRows = NULL;
}

static jvirt_barray_ptr cvipsshim_request(j_common_ptr info, int pool, boolean preZero, JDIMENSION columns,
                                          JDIMENSION rows, JDIMENSION maxAccess) {
    struct cvipsshim_coefficient_store *store = cvipsshim_store_of(info);
    j_decompress_ptr decompress = (j_decompress_ptr) info;
    // The progressive decoder asks for one array per component, in component order.
    if (pool != JPOOL_IMAGE || store->requests >= decompress->num_components || store->count >= CVIPSSHIM_MAX_ARRAYS)
        return store->request(info, pool, preZero, columns, rows, maxAccess);
    int component = store->requests++;
    uint64_t kept = cvipsshim_idct_positions(decompress->comp_info[component].DCT_scaled_size);
    if (!cvipsshim_worth_compacting(kept)) return store->request(info, pool, preZero, columns, rows, maxAccess);
    struct cvipsshim_block_array *array = &store->arrays[store->count++];
    memset(array, 0, sizeof *array);
    array->columns = columns;
    array->rows = rows;
    array->maxAccess = maxAccess;
    array->kept = kept;
    array->scaledSize = decompress->comp_info[component].DCT_scaled_size;
    for (int p = 0; p < 64; p++)
        if (array->kept & ((uint64_t) 1 << p)) array->keptIndex[array->keptCount++] = (unsigned char) p;
    return (jvirt_barray_ptr) array;
}

static void cvipsshim_realize(j_common_ptr info) {
    struct cvipsshim_coefficient_store *store = cvipsshim_store_of(info);
    for (int i = 0; i < store->count; i++) {
        struct cvipsshim_block_array *array = &store->arrays[i];
        if (array->values) continue;
        size_t blocks = (size_t) array->columns * array->rows;
        // Zeroed: libjpeg's arrays are pre-zeroed for the progressive decoder.
        // Eight more: a row of stored values is read and written 8 at a time (`copy_kept`).
        array->values = calloc(blocks * array->keptCount + 8, sizeof(JCOEF));
        array->others = calloc(blocks, sizeof(uint64_t));
        array->block = malloc((size_t) array->maxAccess * array->columns * sizeof(JBLOCK));
        array->windowRows = malloc((size_t) array->maxAccess * sizeof(JBLOCKROW));
        if (!array->values || !array->others || !array->block || !array->windowRows)
            ERREXIT1(info, JERR_OUT_OF_MEMORY, 11);
    }
    store->realize(info);
}

// The positions of a block that are not zero, as a mask (SSE2: 16 coefficients a step;
// one at a time without it).
static inline uint64_t cvipsshim_nonzero(const JCOEF *block) {
    uint64_t mask = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (int i = 0; i < 4; i++) {
        __m128i a = _mm_loadu_si128((const __m128i *) (block + i * 16));
        __m128i b = _mm_loadu_si128((const __m128i *) (block + i * 16 + 8));
        __m128i zeros = _mm_packs_epi16(_mm_cmpeq_epi16(a, zero), _mm_cmpeq_epi16(b, zero));
        mask |= (uint64_t) (uint16_t) ~_mm_movemask_epi8(zeros) << (i * 16);
    }
#else
    for (int k = 0; k < 64; k++) mask |= (uint64_t) (block[k] != 0) << k;
#endif
    return mask;
}

// A block whose coefficients are 1 where `mask` has a bit, 0 elsewhere (SSE2: 8 a step;
// one at a time without it).
static inline void cvipsshim_expand(uint64_t mask, JCOEF *block) {
#if defined(__SSE2__)
    const __m128i bits = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128), one = _mm_set1_epi16(1);
    for (int i = 0; i < 8; i++) {
        __m128i byte = _mm_and_si128(_mm_set1_epi16((short) ((mask >> (i * 8)) & 0xff)), bits);
        _mm_storeu_si128((__m128i *) (block + i * 8), _mm_and_si128(_mm_cmpeq_epi16(byte, bits), one));
    }
#else
    for (int k = 0; k < 64; k++) block[k] = (JCOEF) ((mask >> k) & 1);
#endif
}

// The natural-order positions of zigzag indices from..to (a scan's spectral band).
static uint64_t cvipsshim_band(int from, int to) {
    static const unsigned char zigzag[64] = {
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
    };
    uint64_t band = 0;
    for (int k = from < 0 ? 0 : from; k <= to && k < 64; k++) band |= (uint64_t) 1 << zigzag[k];
    return band;
}

#ifdef CVIPSSHIM_TEST_COUNTERS
static _Thread_local long long cvipsshim_rows_packed;

long long cvipsshim_jpeg_compact_rows_packed(void) {
    return cvipsshim_rows_packed;
}
#endif

// Every kept coefficient of a row of blocks copied to its stored values (`pack`) or back.
// A block's kept positions are the rows x columns that `lines` names (the same for its
// rows and its columns), stored row after row. With SSE2, a row of a block is moved 8
// coefficients at a time: for the top-left N x N sets, its first N lanes; for the reduced
// 4x4 transform's (columns 0-3 and 5-7), lanes 5-7 shifted down one. A stored row is
// written as 8 values, the lanes past it landing on the next row's values, which that
// row's store then overwrites; the last block of a block row has the rows whose 8 values
// would pass its end written exactly, so the next block row's values (which the window
// may not hold) are never touched.
static inline __attribute__((always_inline)) void cvipsshim_copy_row(JBLOCKROW row, JCOEF *values, JDIMENSION columns,
                                                                   int pack, const unsigned char *lines, int n,
                                                                   int topLeft, int reduced4) {
#if defined(__SSE2__)
    if (topLeft || reduced4) {
        // Lanes of a block row that hold kept values: 0..n-1, or 0-3 and 5-7.
        const __m128i lanes = reduced4 ? _mm_setr_epi16(-1, -1, -1, -1, 0, -1, -1, -1)
            : _mm_cmpgt_epi16(_mm_set1_epi16((short) n), _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7));
        const __m128i low4 = _mm_setr_epi16(-1, -1, -1, -1, 0, 0, 0, 0);
        for (JDIMENSION c = 0; c < columns; c++, values += n * n) {
            JCOEF *block = row[c];
            for (int r = 0; r < n; r++) {
                JCOEF *line = block + lines[r] * 8, *stored = values + r * n;
                if (pack) {
                    __m128i v = _mm_loadu_si128((const __m128i *) line);
                    if (reduced4) v = _mm_or_si128(_mm_and_si128(v, low4), _mm_andnot_si128(low4, _mm_srli_si128(v, 2)));
                    if (c == columns - 1 && r * n + 8 > n * n) {
                        JCOEF last[8];
                        _mm_storeu_si128((__m128i *) last, v);
                        memcpy(stored, last, (size_t) n * sizeof(JCOEF));
                    } else {
                        _mm_storeu_si128((__m128i *) stored, v);
                    }
                } else {
                    __m128i v = _mm_loadu_si128((const __m128i *) stored);
                    if (reduced4) v = _mm_or_si128(_mm_and_si128(v, low4), _mm_andnot_si128(low4, _mm_slli_si128(v, 2)));
                    __m128i old = _mm_loadu_si128((const __m128i *) line);
                    _mm_storeu_si128((__m128i *) line, _mm_or_si128(_mm_and_si128(v, lanes), _mm_andnot_si128(lanes, old)));
                }
            }
        }
        return;
    }
#endif
    for (JDIMENSION c = 0; c < columns; c++, values += n * n) {
        JCOEF *block = row[c];
        for (int r = 0; r < n; r++)
            for (int k = 0; k < n; k++) {
                if (pack) values[r * n + k] = block[lines[r] * 8 + lines[k]];
                else block[lines[r] * 8 + lines[k]] = values[r * n + k];
            }
    }
}

static void cvipsshim_copy_kept(const struct cvipsshim_block_array *array, JBLOCKROW row, JCOEF *values, int pack) {
    // cvipsshim_idct_lines's sets, by transform size.
    static const unsigned char one[] = { 0 }, reduced2[] = { 0, 1, 3, 5, 7 }, reduced4[] = { 0, 1, 2, 3, 5, 6, 7 },
        natural[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    JDIMENSION columns = array->columns;
    switch (array->scaledSize) {
    case 1: cvipsshim_copy_row(row, values, columns, pack, one, 1, 0, 0); break;
    case 2: cvipsshim_copy_row(row, values, columns, pack, reduced2, 5, 0, 0); break;
    case 3: cvipsshim_copy_row(row, values, columns, pack, natural, 3, 1, 0); break;
    case 4: cvipsshim_copy_row(row, values, columns, pack, reduced4, 7, 0, 1); break;
    case 5: cvipsshim_copy_row(row, values, columns, pack, natural, 5, 1, 0); break;
    case 6: cvipsshim_copy_row(row, values, columns, pack, natural, 6, 1, 0); break;
    case 7: cvipsshim_copy_row(row, values, columns, pack, natural, 7, 1, 0); break;
    default: {
        // Not reached: 8 and more keep every position, and are not compacted.
        int n = array->keptCount;
        for (JDIMENSION c = 0; c < columns; c++, values += n)
            for (int k = 0; k < n; k++) {
                if (pack) values[k] = row[c][array->keptIndex[k]];
                else row[c][array->keptIndex[k]] = values[k];
            }
    }
    }
}

// The window's blocks back into the store: every kept value (the window holds them all,
// unpacked, and a scan changes only its band's), and which of the band's other positions
// are non-zero.
static void cvipsshim_pack_window(struct cvipsshim_block_array *array) {
    int n = array->keptCount;
    CVIPSSHIM_COUNT(cvipsshim_rows_packed, array->windowCount);
    uint64_t otherBand = array->windowBand & ~array->kept;
    for (JDIMENSION r = 0; r < array->windowCount; r++) {
        size_t first = (size_t) (array->windowStart + r) * array->columns;
        JBLOCKROW row = array->windowRows[r];
        cvipsshim_copy_kept(array, row, array->values + first * n, 1);
        if (otherBand) {
            uint64_t *others = array->others + first;
            for (JDIMENSION c = 0; c < array->columns; c++)
                others[c] = (others[c] & ~otherBand) | (cvipsshim_nonzero(row[c]) & otherBand);
        }
    }
    array->dirty = 0;
}

// Fills the window for a scan (every kept position's value, and the band's others 1 or
// 0) or for the output pass (the kept positions' values; the rest of the window was
// zeroed when the output pass began and is never written there).
static void cvipsshim_unpack_window(struct cvipsshim_block_array *array) {
    int n = array->keptCount;
    int expand = !array->windowForOutput && (array->windowBand & ~array->kept);
    for (JDIMENSION r = 0; r < array->windowCount; r++) {
        size_t first = (size_t) (array->windowStart + r) * array->columns;
        JBLOCKROW row = array->windowRows[r];
        if (expand)
            for (JDIMENSION c = 0; c < array->columns; c++) cvipsshim_expand(array->others[first + c], row[c]);
        cvipsshim_copy_kept(array, row, array->values + first * n, 0);
    }
}

static JBLOCKARRAY cvipsshim_access(j_common_ptr info, jvirt_barray_ptr pointer, JDIMENSION start, JDIMENSION count,
                                    boolean writable) {
    struct cvipsshim_coefficient_store *store = cvipsshim_store_of(info);
    struct cvipsshim_block_array *array = cvipsshim_array_of(store, pointer);
    if (!array) return store->access(info, pointer, start, count, writable);
    if (count > array->maxAccess || start + count > array->rows || !array->values)
        ERREXIT(info, JERR_BAD_VIRTUAL_ACCESS);
    // The scans write (the current scan's band: zigzag Ss..Se), the output pass reads.
    j_decompress_ptr decompress = (j_decompress_ptr) info;
    int forOutput = !writable;
    uint64_t band = forOutput ? array->kept : cvipsshim_band(decompress->Ss, decompress->Se);
    int inWindow = array->windowCount > 0 && start >= array->windowStart
        && start + count <= array->windowStart + array->windowCount;
    if (!inWindow || array->windowForOutput != forOutput || array->windowBand != band) {
        if (array->dirty) cvipsshim_pack_window(array);
        if (forOutput && !array->windowForOutput)
            memset(array->block, 0, (size_t) array->maxAccess * array->columns * sizeof(JBLOCK));
        array->windowForOutput = forOutput;
        array->windowBand = band;
        array->windowStart = start;
        array->windowCount = count;
        for (JDIMENSION r = 0; r < count; r++) array->windowRows[r] = array->block + (size_t) r * array->columns;
        cvipsshim_unpack_window(array);
    }
    if (writable) array->dirty = 1;
    return array->windowRows + (start - array->windowStart);
}

static void cvipsshim_free_pool(j_common_ptr info, int pool) {
    struct cvipsshim_coefficient_store *store = cvipsshim_store_of(info);
    if (pool == JPOOL_IMAGE) {
        for (int i = 0; i < store->count; i++) cvipsshim_array_release(&store->arrays[i]);
        store->count = 0;
        store->requests = 0;
    }
    store->freePool(info, pool);
}

static void cvipsshim_self_destruct(j_common_ptr info) {
    struct cvipsshim_coefficient_store *store = cvipsshim_store_of(info);
    for (int i = 0; i < store->count; i++) cvipsshim_array_release(&store->arrays[i]);
    store->count = 0;
    info->client_data = NULL;
    void (*selfDestruct)(j_common_ptr) = store->selfDestruct;
    free(store);
    selfDestruct(info);
}

int cvipsshim_jpeg_compact_coefficients(j_decompress_ptr info) {
    if (!jpeg_has_multiple_scans(info)) return 0;
    // The components' transform sizes at the scale set (jpeg_start_decompress works them
    // out again the same way): nothing to do when none is worth compacting.
    jpeg_calc_output_dimensions(info);
    int worth = 0;
    for (int c = 0; c < info->num_components; c++)
        worth |= cvipsshim_worth_compacting(cvipsshim_idct_positions(info->comp_info[c].DCT_scaled_size));
    if (!worth) return 0;
    struct cvipsshim_coefficient_store *store = calloc(1, sizeof *store);
    if (!store) return 0;
    struct jpeg_memory_mgr *mem = info->mem;
    store->request = mem->request_virt_barray;
    store->realize = mem->realize_virt_arrays;
    store->access = mem->access_virt_barray;
    store->freePool = mem->free_pool;
    store->selfDestruct = mem->self_destruct;
    info->client_data = store;   // the decoder's own: nothing else of ours uses it
    mem->request_virt_barray = cvipsshim_request;
    mem->realize_virt_arrays = cvipsshim_realize;
    mem->access_virt_barray = cvipsshim_access;
    mem->free_pool = cvipsshim_free_pool;
    mem->self_destruct = cvipsshim_self_destruct;
    // Block smoothing (for a file whose last scans are missing) reads neighbouring
    // blocks' low coefficients; such a file is refused anyway (a warning is a failure).
    info->do_block_smoothing = FALSE;
    return 1;
}
