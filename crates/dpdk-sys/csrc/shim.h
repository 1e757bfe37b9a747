/* Out-of-line wrappers for DPDK's static inline functions and macros, so Rust can call
 * them. bindgen parses this header together with DPDK's own, so a prototype here that
 * disagrees with DPDK's fails the build. Keep each wrapper a one-liner. */
#ifndef MPLSROUTER_SHIM_H
#define MPLSROUTER_SHIM_H

#include <stdint.h>
#include <rte_config.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_lcore.h>
#include <rte_launch.h>
#include <rte_cycles.h>
#include <rte_prefetch.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_fib6.h>
#include <rte_bus_vdev.h>
#include <rte_version.h>
#include <rte_malloc.h>

/* Function-like macros bindgen cannot evaluate, as constants. */
extern const uint64_t shim_RTE_ETH_RSS_IP;
extern const uint64_t shim_RTE_ETH_RSS_TCP;
extern const uint64_t shim_RTE_ETH_RSS_UDP;
extern const uint16_t shim_RTE_PKTMBUF_HEADROOM;
extern const uint16_t shim_RTE_MBUF_DEFAULT_BUF_SIZE;

/* ethdev */
uint16_t shim_rte_eth_rx_burst(uint16_t port_id, uint16_t queue_id,
                               struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t shim_rte_eth_tx_burst(uint16_t port_id, uint16_t queue_id,
                               struct rte_mbuf **tx_pkts, uint16_t nb_pkts);

/* mbuf */
struct rte_mbuf *shim_rte_pktmbuf_alloc(struct rte_mempool *mp);
int shim_rte_pktmbuf_alloc_bulk(struct rte_mempool *pool, struct rte_mbuf **mbufs,
                                unsigned int count);
void shim_rte_pktmbuf_free(struct rte_mbuf *m);
char *shim_rte_pktmbuf_prepend(struct rte_mbuf *m, uint16_t len);
char *shim_rte_pktmbuf_adj(struct rte_mbuf *m, uint16_t len);
char *shim_rte_pktmbuf_append(struct rte_mbuf *m, uint16_t len);
int shim_rte_pktmbuf_trim(struct rte_mbuf *m, uint16_t len);
uint16_t shim_rte_pktmbuf_headroom(const struct rte_mbuf *m);
uint16_t shim_rte_pktmbuf_tailroom(const struct rte_mbuf *m);
void *shim_rte_pktmbuf_mtod(struct rte_mbuf *m);
uint32_t shim_rte_pktmbuf_pkt_len(const struct rte_mbuf *m);
uint16_t shim_rte_pktmbuf_data_len(const struct rte_mbuf *m);
uint16_t shim_rte_mbuf_refcnt_read(const struct rte_mbuf *m);
uint16_t shim_rte_mbuf_refcnt_update(struct rte_mbuf *m, int16_t value);
int shim_rte_pktmbuf_is_contiguous(const struct rte_mbuf *m);
int shim_rte_pktmbuf_chain(struct rte_mbuf *head, struct rte_mbuf *tail);

/* lcore, time, CPU */
unsigned int shim_rte_lcore_id(void);
uint64_t shim_rte_rdtsc(void);
void shim_rte_prefetch0(const volatile void *p);
void shim_rte_pause(void);
int shim_rte_errno(void);

/* rings */
unsigned int shim_rte_ring_enqueue_burst(struct rte_ring *r, void *const *obj_table,
                                         unsigned int n);
unsigned int shim_rte_ring_dequeue_burst(struct rte_ring *r, void **obj_table,
                                         unsigned int n);
unsigned int shim_rte_ring_count(const struct rte_ring *r);

/* LPM (the baseline our own Lpm4 is measured against) */
int shim_rte_lpm_lookup(struct rte_lpm *lpm, uint32_t ip, uint32_t *next_hop);
/* rte_fib6_create with a TRIE config (its conf holds an anonymous union). */
struct rte_fib6 *shim_rte_fib6_create_trie(const char *name, int socket_id, int max_routes,
                                           uint32_t num_tbl8, uint64_t default_nh);
/* Bytes allocated from the DPDK heaps of all sockets (rte_malloc_get_socket_stats). */
uint64_t shim_rte_malloc_allocated_bytes(void);
int shim_rte_lpm_lookup_bulk(const struct rte_lpm *lpm, const uint32_t *ips,
                             uint32_t *next_hops, unsigned int n);
void shim_rte_lpm_lookupx4(const struct rte_lpm *lpm, const uint32_t ip[4],
                           uint32_t hop[4], uint32_t defv);

#endif
