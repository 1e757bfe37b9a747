#include "shim.h"

const uint64_t shim_RTE_ETH_RSS_IP = RTE_ETH_RSS_IP;
const uint64_t shim_RTE_ETH_RSS_TCP = RTE_ETH_RSS_TCP;
const uint64_t shim_RTE_ETH_RSS_UDP = RTE_ETH_RSS_UDP;
const uint16_t shim_RTE_PKTMBUF_HEADROOM = RTE_PKTMBUF_HEADROOM;
const uint16_t shim_RTE_MBUF_DEFAULT_BUF_SIZE = RTE_MBUF_DEFAULT_BUF_SIZE;

uint16_t shim_rte_eth_rx_burst(uint16_t port_id, uint16_t queue_id,
                               struct rte_mbuf **rx_pkts, uint16_t nb_pkts)
{ return rte_eth_rx_burst(port_id, queue_id, rx_pkts, nb_pkts); }

uint16_t shim_rte_eth_tx_burst(uint16_t port_id, uint16_t queue_id,
                               struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{ return rte_eth_tx_burst(port_id, queue_id, tx_pkts, nb_pkts); }

struct rte_mbuf *shim_rte_pktmbuf_alloc(struct rte_mempool *mp)
{ return rte_pktmbuf_alloc(mp); }

int shim_rte_pktmbuf_alloc_bulk(struct rte_mempool *pool, struct rte_mbuf **mbufs,
                                unsigned int count)
{ return rte_pktmbuf_alloc_bulk(pool, mbufs, count); }

void shim_rte_pktmbuf_free(struct rte_mbuf *m) { rte_pktmbuf_free(m); }

char *shim_rte_pktmbuf_prepend(struct rte_mbuf *m, uint16_t len)
{ return rte_pktmbuf_prepend(m, len); }

char *shim_rte_pktmbuf_adj(struct rte_mbuf *m, uint16_t len)
{ return rte_pktmbuf_adj(m, len); }

char *shim_rte_pktmbuf_append(struct rte_mbuf *m, uint16_t len)
{ return rte_pktmbuf_append(m, len); }

int shim_rte_pktmbuf_trim(struct rte_mbuf *m, uint16_t len)
{ return rte_pktmbuf_trim(m, len); }

uint16_t shim_rte_pktmbuf_headroom(const struct rte_mbuf *m)
{ return rte_pktmbuf_headroom(m); }

uint16_t shim_rte_pktmbuf_tailroom(const struct rte_mbuf *m)
{ return rte_pktmbuf_tailroom(m); }

void *shim_rte_pktmbuf_mtod(struct rte_mbuf *m) { return rte_pktmbuf_mtod(m, void *); }

uint32_t shim_rte_pktmbuf_pkt_len(const struct rte_mbuf *m) { return rte_pktmbuf_pkt_len(m); }

uint16_t shim_rte_pktmbuf_data_len(const struct rte_mbuf *m) { return rte_pktmbuf_data_len(m); }

uint16_t shim_rte_mbuf_refcnt_read(const struct rte_mbuf *m) { return rte_mbuf_refcnt_read(m); }

uint16_t shim_rte_mbuf_refcnt_update(struct rte_mbuf *m, int16_t value)
{ return rte_mbuf_refcnt_update(m, value); }

int shim_rte_pktmbuf_is_contiguous(const struct rte_mbuf *m) { return rte_pktmbuf_is_contiguous(m); }

int shim_rte_pktmbuf_chain(struct rte_mbuf *head, struct rte_mbuf *tail) { return rte_pktmbuf_chain(head, tail); }

unsigned int shim_rte_lcore_id(void) { return rte_lcore_id(); }

uint64_t shim_rte_rdtsc(void) { return rte_rdtsc(); }

void shim_rte_prefetch0(const volatile void *p) { rte_prefetch0(p); }

void shim_rte_pause(void) { rte_pause(); }

int shim_rte_errno(void) { return rte_errno; }

unsigned int shim_rte_ring_enqueue_burst(struct rte_ring *r, void *const *obj_table,
                                         unsigned int n)
{ return rte_ring_enqueue_burst(r, obj_table, n, NULL); }

unsigned int shim_rte_ring_dequeue_burst(struct rte_ring *r, void **obj_table,
                                         unsigned int n)
{ return rte_ring_dequeue_burst(r, obj_table, n, NULL); }

unsigned int shim_rte_ring_count(const struct rte_ring *r) { return rte_ring_count(r); }

struct rte_fib6 *shim_rte_fib6_create_trie(const char *name, int socket_id, int max_routes,
                                           uint32_t num_tbl8, uint64_t default_nh)
{
    struct rte_fib6_conf conf = {
        .type = RTE_FIB6_TRIE,
        .default_nh = default_nh,
        .max_routes = max_routes,
        .rib_ext_sz = 0,
        .trie = { .nh_sz = RTE_FIB6_TRIE_4B, .num_tbl8 = num_tbl8 },
    };
    return rte_fib6_create(name, socket_id, &conf);
}

uint64_t shim_rte_malloc_allocated_bytes(void)
{
    uint64_t total = 0;
    for (int s = 0; s < RTE_MAX_NUMA_NODES; s++) {
        struct rte_malloc_socket_stats st;
        if (rte_malloc_get_socket_stats(s, &st) == 0)
            total += st.heap_allocsz_bytes;
    }
    return total;
}

int shim_rte_lpm_lookup(struct rte_lpm *lpm, uint32_t ip, uint32_t *next_hop)
{ return rte_lpm_lookup(lpm, ip, next_hop); }

int shim_rte_lpm_lookup_bulk(const struct rte_lpm *lpm, const uint32_t *ips,
                             uint32_t *next_hops, unsigned int n)
{ return rte_lpm_lookup_bulk(lpm, ips, next_hops, n); }

void shim_rte_lpm_lookupx4(const struct rte_lpm *lpm, const uint32_t ip[4],
                           uint32_t hop[4], uint32_t defv)
{
    xmm_t v = _mm_loadu_si128((const __m128i *)ip);
    rte_lpm_lookupx4(lpm, v, hop, defv);
}
