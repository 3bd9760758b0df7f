// CUPTI's activity buffers: a fixed pool handed out by the request callback
// (it may run on application threads: no allocation there) and queued for
// the writer at completion, tagged with the CUPTI session that filled them.
// cupti_source.h declares what the writer calls (drain and the counts).
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

namespace gpuscope::collector::cupti_source::buffers {

// At start(): allocates the pool (zeroed: CUPTI need not clear the buffers)
// and puts every buffer on the free stack.
void allocate();
// cuptiActivityRegisterCallbacks's two callbacks.
void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid);
// After cuptiFinalize: buffers completing from now on belong to a new session
// (CUPTI numbers correlation ids from 1 again; RowSink keeps them unique).
void next_session();

}  // namespace gpuscope::collector::cupti_source::buffers
