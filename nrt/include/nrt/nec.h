/*
 * tpb-emu's libnrt: the functions of the [H28] nec.h (Neuron Elastic Collectives), all NRT-EC-19
 * stubs (SPEC-NRT §8): NRT_INVALID for NRT_STATUS, -1 for int, 0 for size_t, false for bool,
 * nothing for void; nothing is written through any argument. The public header's collective
 * structures are not reproduced (it defines enum nec_pod_type three times and compiles in neither
 * C nor C++, SPEC-NRT §2.2): the pointer arguments are opaque here, and nec_pod_type_t, passed by
 * value, is a 4-byte int as every C enum of the ABI.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int nec_pod_type_t;
typedef struct enc_host_mem enc_host_mem_t;
typedef struct nec_version_info nec_version_info_t;

void nec_inc_semaphore(volatile uint32_t *sem_inc_addr, uint32_t val);
size_t nec_get_dynamic_send_size_bytes(enc_host_mem_t *dyn_input, size_t data_type_sz, int dst_rank, int rank_n);
size_t nec_get_dynamic_send_offset_bytes(enc_host_mem_t *dyn_input, size_t data_type_sz, int dst_rank,
                                         int rank_n);
size_t nec_get_dynamic_recv_size_bytes(enc_host_mem_t *dyn_input, size_t data_type_sz, int src_rank, int rank_n);
size_t nec_get_dynamic_recv_offset_bytes(enc_host_mem_t *dyn_input, size_t data_type_sz, int src_rank,
                                         int rank_n);
void nec_set_recv_size_bytes(enc_host_mem_t *dyn_input, size_t recv_size_bytes, size_t data_type_sz, int src_rank,
                             int rank_n);
int nec_get_device_count(int *available_devices_array, uint32_t array_size);
int nec_get_device_pci_bdf(int neuron_dev, uint32_t *domain, uint32_t *bus_num, uint8_t *pci_slot,
                           uint8_t *dev_func);
NRT_STATUS nec_get_virtual_core_size(uint32_t *virtual_core_size);
NRT_STATUS nec_get_version_info(nec_version_info_t *version_info);
NRT_STATUS nec_build_port_and_rid_map(int local_nec_dev_id, int *mla_indexes, int *host_device_ids, int count);
bool nec_is_mla_available(int local_nec_dev_id, int mla_idx);
int nec_mla_idx_to_rid(int local_nec_dev_id, int mla_idx);
int nec_rid_to_mla_idx(int local_nec_dev_id, int rid);
int nec_get_peer_mla_idx(int local_nec_dev_id, int mla_idx, int port);
int nec_get_p2p_pod_peer_node(uint32_t nec_dev_id, int node, uint32_t port_distance, int *peer_node);
NRT_STATUS nec_pod_node_can_access_peer_node(nec_pod_type_t pod_type, uint32_t local_rid, uint32_t local_node_id,
                                             uint32_t remote_rid, uint32_t remote_node_id, int *can_access_peer);
void nec_ndl_printk(char *str, uint32_t size, uint32_t action);

#ifdef __cplusplus
}
#endif
