/* The mechanism catalogue's interface (docs/mechanisms.md): what a catalogue is, and the
 * kernels' view of one block of a group. The NMODL code generator's kernels and catalogue
 * tables are written against it; the engine steps mechanisms through it; a user's catalogue
 * (a shared library from `hinesbatch build-catalogue MODDIR`) exports hb_catalogue_v1().
 * Plain C11 and CUDA C: no includes. */
#ifndef HB_COMMON_MECH_ABI_H
#define HB_COMMON_MECH_ABI_H

/* Bumped on any change to the structs below; a catalogue of another ABI is refused. */
#define HB_CAT_ABI 6

/* Doubles between two connections' weight vectors (NET_RECEIVE's arguments at most). */
#define HB_CAT_MAX_WEIGHT 8

/* One ion species on a block's rows: element (row, lane k) at [row W + k]. */
typedef struct {
    double *e;    /* reversal potential [mV] */
    double *ci;   /* inner concentration [mM] */
    double *co;   /* outer concentration [mM] */
    double *i;    /* this step's total current of the species [mA/cm2]; in a current
                   * kernel's view NULL where nothing reads it: the kernel adds nothing then */
    double *didv; /* and its conductance [mA/cm2/mV] (NULL with i) */
} hb_ion_block_t;

/* A generated FROM loop's refusal (docs/nmodl.md, section 4): a trip count above
 * HB_CAT_FROM_MAX, or a bound that is not finite, stops the run instead of looping. The first
 * refusal is kept; line 0: none yet. */
#define HB_CAT_FROM_MAX 1e6
typedef struct {
    const char *mech; /* SUFFIX or POINT_PROCESS */
    const char *file; /* the .mod file as the generator was given it */
    int line;         /* the FROM statement's line there */
    double count;     /* the trip count refused (NaN or infinite: a bound not finite) */
} hb_cat_fault_t;

typedef struct {
    int lanes, width, cl; /* lanes to step (<= width), W, 1 per lane or 0 shared parameters */
    double dt, t, celsius; /* [ms], [ms], [degC] */
    const double *v;      /* the block's rows: v[row W + k] */
    double *d, *rhs;      /* pass A's accumulators: conductance and outward current */
    const int *node;      /* instance j's row of lane k: node[j W + k] */
    double *field;        /* per instance and lane: field[(j n_field + q) W + k] */
    const double *param;  /* cl 0: RANGE PARAMETER q of instance j at param[j n_param + q] */
    const double *global; /* GLOBAL PARAMETERs */
    hb_ion_block_t *ion;  /* the species the mechanism uses, in its USEION order */
    const double *const *table; /* TABLE data, one per TABLE statement; NULL: the formulas */
    const double *area;   /* point processes: instance j's row area [um2] at area[j W + k]
                           * (the current [nA] enters its row as 1e2/area mA/cm2) */
    /* NET_RECEIVE's FOR_NETCONS, in the event kernels: the connections to the event's
     * instance, netcon_first then netcon_next[c] until -1, connection c's weight vector at
     * netcon_w[c HB_CAT_MAX_WEIGHT], in the order they were added (hb_sim_add_weights: the
     * network's connection order). Elsewhere NULL, NULL, -1. */
    double *netcon_w;
    const int *netcon_next;
    int netcon_first;
    hb_cat_fault_t *fault; /* where a FROM loop's refusal goes; NULL: none kept (the loop's
                            * mechanism instance then gets NaN STATEs, and the run stops at
                            * the next check of v) */
} hb_cat_block_t;

typedef enum { HB_CAT_DENSITY, HB_CAT_POINT, HB_CAT_ARTIFICIAL } hb_cat_kind_t;

/* A declared variable as the model file, the C API and Python name it. */
typedef struct {
    const char *name; /* "gNaTs2_tbar": the model file's key is the name as written */
    const char *unit; /* "S/cm2", as the .mod declares it ("" when none) */
    double value;     /* default (states: 0 unless the .mod gives one) */
    double lo, hi;    /* <lo,hi> where declared, else -inf, +inf: the model file's range check */
} hb_cat_field_t;

/* Ion variables, as bits of hb_cat_ion_t's read and write masks. */
enum { HB_ION_E = 1, HB_ION_CI = 2, HB_ION_CO = 4, HB_ION_I = 8 };

typedef struct {
    const char *ion;      /* "na", "k", "ca", any name */
    double valence;       /* VALENCE, or na 1, k 1, ca 2, cl -1 */
    unsigned read, write; /* HB_ION_* */
} hb_cat_ion_t;

/* Self-events (NEURON's net_send and net_move, docs/mechanisms.md section 10): what one call of
 * a point process's NET_RECEIVE or INITIAL asks for, in the order it asked. net_send(delay,
 * flag) is a request at t + delay; net_move(tt) moves the instance's waiting flag-1 event to
 * tt. The engine queues them after the call; n may pass HB_CAT_MAX_SENDS (the requests past it
 * are dropped, the engine refuses the run). net_event(tt) (move 2) is no self-event: a spike
 * of the instance at tt, which its cell's connections receive where the instance is the cell's
 * spike source (docs/network.md, "Point processes as spike sources"). */
#define HB_CAT_MAX_SENDS 8
typedef struct {
    double time; /* [ms]: absolute, t + delay (net_send) or tt (net_move) */
    double flag; /* net_send's flag; unused by net_move */
    int move;    /* 1: net_move, 2: net_event (time: the spike's) */
} hb_cat_send_t;

typedef struct {
    int n;
    hb_cat_send_t req[HB_CAT_MAX_SENDS];
} hb_cat_sends_t;

/* The kernels (docs/mechanisms.md, section 3): HB_HOSTDEV code over instances [j0, j1) of a
 * block and its lanes. A NULL kernel: the mechanism has nothing to do there. */
typedef struct hb_cat_cpu {
    void (*init)(const hb_cat_block_t *blk, int j0, int j1);    /* INITIAL: states set */
    void (*current)(const hb_cat_block_t *blk, int j0, int j1); /* BREAKPOINT's currents */
    void (*state)(const hb_cat_block_t *blk, int j0, int j1);   /* SOLVE: states by dt */
    /* One event on instance j of lane k: weight[n_weight] is the connection's weight vector
     * (the first the weight, the others NET_RECEIVE's per-connection state, kept by the
     * connection across events), t the event's time [ms]. */
    void (*net_receive)(const hb_cat_block_t *blk, int j, int k, double *weight, double t);
    /* NET_RECEIVE's INITIAL for one connection to instance j of lane k (NEURON runs it for
     * every NetCon at finitialize, after the mechanisms' INITIAL); NULL: none, the engine then
     * zeroes weight[1 .. n_weight) as NEURON does. */
    void (*net_init)(const hb_cat_block_t *blk, int j, int k, double *weight, double t);
    /* TABLE data at celsius and the globals: table[q] holds table_len[q] doubles. */
    void (*tables)(double celsius, const double *global, double *const *table);
    /* Point processes that send themselves events (net_send, net_move; NULL for the others,
     * which use the two above): NET_RECEIVE of one event of flag `flag` (0: a connection's,
     * else a self-event's), its requests into *out (out->n counted on); and the INITIAL of
     * instance j of lane k alone, at t 0, its net_send requests into *out (the engine runs it
     * instead of init for such a mechanism). */
    void (*net_receive_self)(const hb_cat_block_t *blk, int j, int k, double *weight, double t,
                             double flag, hb_cat_sends_t *out);
    void (*init_self)(const hb_cat_block_t *blk, int j, int k, hb_cat_sends_t *out);
    /* Its WATCH conditions after a step ending at t [ms] (NULL: none): a condition active and
     * now true that was not asks for a self-event of its flag at t (NEURON's check_thresh). */
    void (*watch)(const hb_cat_block_t *blk, int j, int k, double t, hb_cat_sends_t *out);
} hb_cat_cpu_t;

/* One lane's view for a user catalogue's CUDA kernels (docs/mechanisms.md, section 6): blk with
 * lanes 1 and device pointers (blk.ion unused: ion[] holds the mechanism's species, in its USEION
 * order), its instances [0, n_inst). The engine keeps one per slot of a group in device memory. */
#define HB_CAT_LANE_ION 8
typedef struct {
    hb_cat_block_t blk;
    hb_ion_block_t ion[HB_CAT_LANE_ION];
    int n_inst;
} hb_cat_lane_t;

/* One event for a user catalogue's NET_RECEIVE on CUDA (docs/mechanisms.md, section 10). */
typedef struct {
    double t;      /* the event's time [ms] */
    double weight; /* its weight (NET_RECEIVE's first argument) */
    double *w;     /* its connection's weight vector (device, n_weight doubles, written back);
                    * NULL: none, a vector of its own, (weight, 0, ...), NET_RECEIVE's INITIAL
                    * run on it first */
} hb_cat_event_t;

/* Where a run of one target's events starts in a step's events: instance inst of the slot whose
 * view is *lane, the events ev[p .. p + n) in delivery order (n 0: no run starts at p), for the
 * user point process numbered `key` among the simulation's. */
typedef struct {
    const hb_cat_lane_t *lane; /* device */
    int inst;
    int key;
    int n;
} hb_cat_run_t;

/* One call of a user point process that sends itself events (docs/mechanisms.md, section 10), on
 * CUDA: NET_RECEIVE of one event (net_receive_self) or its WATCH check after a step (watch). The
 * engine fills target and the event; lane, inst and key from the target on the device. */
typedef struct {
    const hb_cat_lane_t *lane; /* device */
    int inst, key;
    int target;    /* the simulation's target (the engine's) */
    int init;      /* 1: w NULL, a connection of its own: NET_RECEIVE's INITIAL on it first */
    double t;      /* [ms]: the event's time (watch: the step's end) */
    double weight; /* w NULL: its own vector's first value, (weight, 0, ...) */
    double flag;   /* 0: a connection's event; else the self-event's */
    double *w;     /* the weight vector it carries (device, written back); NULL: its own */
    /* FOR_NETCONS (hb_cat_block_t.netcon_*, device; netcon_next NULL: none): the vectors, per
     * vector the target's next, the target's first (-1: no connection) */
    double *netcon_w;
    const int *netcon_next;
    int netcon_first;
} hb_cat_self_call_t;

/* Host launchers of a user catalogue's CUDA kernels (docs/mechanisms.md, section 6): lane[n] in
 * device memory, a thread a lane, the kernel over instances [0, lane[s].n_inst) at time t [ms]
 * with step dt [ms], on `stream` (a cudaStream_t); init and state run with blk.d and blk.rhs
 * NULL. net_receive (a point process with NET_RECEIVE; else NULL): run[n] and ev[n] in device
 * memory, a thread a position p: where run[p].n > 0 and run[p].key is `key`, NET_RECEIVE on
 * each of ev[p .. p + run[p].n) in order, blk.d and blk.rhs NULL. Returns the launch's
 * cudaError_t as int (0: launched). */
typedef struct hb_cat_cuda {
    int (*init)(const hb_cat_lane_t *lane, int n, double t, double dt, void *stream);
    int (*current)(const hb_cat_lane_t *lane, int n, double t, double dt, void *stream);
    int (*state)(const hb_cat_lane_t *lane, int n, double t, double dt, void *stream);
    int (*net_receive)(const hb_cat_run_t *run, const hb_cat_event_t *ev, int n, int key,
                       double dt, void *stream);
    /* A mechanism that sends itself events (else NULL): a thread a call call[p] whose key is
     * `key`, NET_RECEIVE with the call's flag, its requests into out[p] (device, out[p].n from
     * 0); watch (WATCH; else NULL) the same with the conditions checked at call[p].t. */
    int (*net_receive_self)(const hb_cat_self_call_t *call, int n, int key, double dt,
                            hb_cat_sends_t *out, void *stream);
    int (*watch)(const hb_cat_self_call_t *call, int n, int key, double dt, hb_cat_sends_t *out,
                 void *stream);
} hb_cat_cuda_t;

/* One mechanism. field[] per instance holds, in this order: its RANGE PARAMETERs (n_param;
 * per lane where cl is 1), its STATEs (n_state), the ASSIGNED the kernels keep between
 * calls (n_assigned), then n_field - n_param - n_state - n_assigned of scratch. */
typedef struct hb_cat_mech {
    const char *name; /* SUFFIX or POINT_PROCESS: "NaTs2_t", "ExpSyn" */
    hb_cat_kind_t kind;
    int n_param;    const hb_cat_field_t *param;    /* RANGE PARAMETERs: one per instance */
    int n_global;   const hb_cat_field_t *global;   /* GLOBAL PARAMETERs: one per mechanism */
    int n_state;    const hb_cat_field_t *state;    /* value: the initial value before INITIAL */
    int n_assigned; const hb_cat_field_t *assigned; /* RANGE ASSIGNED the kernels keep */
    int n_ion;      const hb_cat_ion_t *ion;        /* USEION order: blk->ion[] */
    int n_weight;      /* NET_RECEIVE's arguments (the weight first); -1 without */
    int writes_current; /* has ion WRITE i<x> or NONSPECIFIC_CURRENT */
    int writes_conc;    /* writes <x>i or <x>o: a concentration mechanism */
    int numeric_didv;   /* 1: the conductance by NEURON's difference (section 5) */
    int n_field;        /* per-instance doubles: param, state, assigned, then scratch */
    int n_table; const int *table_len; /* TABLE statements and their lengths [doubles] */
    const hb_cat_cpu_t *cpu;   /* never NULL */
    const hb_cat_cuda_t *cuda; /* NULL: no CUDA kernels (built without nvcc, or built-ins: fused) */
    /* RANDOM variables (NEURON 9): each one's stream ids (id1, id2, id3) are the instance's
     * last 3 n_random fields, in declaration order, which the engine sets before INITIAL
     * (docs/mechanisms.md, section 10: seed, gid, synapse index). */
    int n_random;
    int for_netcons; /* 1: NET_RECEIVE has FOR_NETCONS (blk->netcon_*; on the GPU where it
                      * sends itself events: hb_cat_self_call_t) */
    int net_event;   /* 1: NET_RECEIVE calls net_event (a spike source; the CPU engine's) */
} hb_cat_mech_t;

typedef struct {
    unsigned abi;          /* HB_CAT_ABI */
    unsigned sizeof_mech;  /* sizeof(hb_cat_mech_t) the catalogue was built with */
    const char *name;      /* "builtin", or MODDIR's base name */
    const char *generator; /* "hinesbatch nmodl <hash of the generator's sources>" */
    int n_mech;
    const hb_cat_mech_t *mech;
} hb_catalogue_t;

#endif
