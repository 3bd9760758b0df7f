// What the Chrome export (and TensorBoard's, which is the same writer) does
// with each column of each kind of the event stream: it reads the *Read
// columns, exactly those, and leaves the *LeftOut ones out on purpose
// (store/event_stream.h checks that every column is one or the other).
#pragma once

#include "trace_formats/store/coverage.h"
#include "trace_formats/store/records.h"

namespace gpuscope::formats::chrome_columns {

using namespace store::rec;  // the row structs of records.h: Kernel, Op, Step, ...

inline constexpr Step::Column kStepRead[] = {Step::kPid, Step::kNumber, Step::kStart, Step::kEnd, Step::kSource};
inline constexpr Step::Column kStepLeftOut[] = {Step::kId};  // the row key

// Kineto's cpu_op events carry no depth (viewers nest by time), nor whether
// an op ran in backward or its RecordFunction scope.
inline constexpr Op::Column kOpRead[] = {Op::kId,    Op::kPid,      Op::kTid,      Op::kNameId,
                                         Op::kStart, Op::kEnd,      Op::kSeqNr,    Op::kShapesId,
                                         Op::kDtypesId, Op::kExternalId};
inline constexpr Op::Column kOpLeftOut[] = {Op::kDepth, Op::kBackward, Op::kScope};

// Ranges nest by time on their thread; their depth is not written.
inline constexpr Range::Column kRangeRead[] = {Range::kId,    Range::kPid,   Range::kTid,   Range::kSource,
                                               Range::kKind,  Range::kDomainId, Range::kNameId, Range::kStart,
                                               Range::kEnd,   Range::kColor, Range::kCategory};
inline constexpr Range::Column kRangeLeftOut[] = {Range::kDepth};

inline constexpr ApiCall::Column kApiCallRead[] = {
    ApiCall::kId,     ApiCall::kPid,   ApiCall::kTid, ApiCall::kDomain,      ApiCall::kCbid,
    ApiCall::kNameId, ApiCall::kStart, ApiCall::kEnd, ApiCall::kCorrelation, ApiCall::kReturnCode};

// A GPU event carries every column of its row but the row key.
inline constexpr Kernel::Column kKernelRead[] = {
    Kernel::kPid,    Kernel::kDevice, Kernel::kContext,   Kernel::kStream,     Kernel::kCorrelation,
    Kernel::kStart,  Kernel::kEnd,    Kernel::kNameId,    Kernel::kGridX,      Kernel::kGridY,
    Kernel::kGridZ,  Kernel::kBlockX, Kernel::kBlockY,    Kernel::kBlockZ,     Kernel::kRegisters,
    Kernel::kStaticSmem, Kernel::kDynamicSmem, Kernel::kGraphId, Kernel::kGraphNodeId};
inline constexpr Kernel::Column kKernelLeftOut[] = {Kernel::kId};

inline constexpr Memcpy::Column kMemcpyRead[] = {
    Memcpy::kPid,     Memcpy::kDevice,  Memcpy::kContext, Memcpy::kStream, Memcpy::kCorrelation,
    Memcpy::kStart,   Memcpy::kEnd,     Memcpy::kCopyKind, Memcpy::kSrcKind, Memcpy::kDstKind,
    Memcpy::kBytes,   Memcpy::kSrcDevice, Memcpy::kDstDevice, Memcpy::kGraphId};
inline constexpr Memcpy::Column kMemcpyLeftOut[] = {Memcpy::kId};

// Kineto's gpu_memset events carry no value.
inline constexpr Memset::Column kMemsetRead[] = {Memset::kPid,   Memset::kDevice, Memset::kContext, Memset::kStream,
                                                 Memset::kCorrelation, Memset::kStart, Memset::kEnd, Memset::kBytes,
                                                 Memset::kMemKind, Memset::kGraphId};
inline constexpr Memset::Column kMemsetLeftOut[] = {Memset::kId, Memset::kValue};

// A sync is drawn on the GPU stream it waited for, not on the calling thread.
inline constexpr Sync::Column kSyncRead[] = {Sync::kPid,   Sync::kType,       Sync::kContext,    Sync::kStream,
                                             Sync::kEvent, Sync::kStart,      Sync::kEnd,        Sync::kCorrelation,
                                             Sync::kWaitStream, Sync::kEventCorrelation};
inline constexpr Sync::Column kSyncLeftOut[] = {Sync::kId, Sync::kTid};

// Kineto's [memory] events tell the device, not the kind of memory.
inline constexpr MemoryEvent::Column kMemoryRead[] = {
    MemoryEvent::kPid,    MemoryEvent::kDevice, MemoryEvent::kTs,     MemoryEvent::kOp,
    MemoryEvent::kSource, MemoryEvent::kAddress, MemoryEvent::kBytes, MemoryEvent::kStream,
    MemoryEvent::kCorrelation, MemoryEvent::kTotalAllocated, MemoryEvent::kTotalReserved};
inline constexpr MemoryEvent::Column kMemoryLeftOut[] = {MemoryEvent::kId, MemoryEvent::kMemKind};

inline constexpr Counter::Column kCounterRead[] = {Counter::kPid, Counter::kDevice, Counter::kNameId, Counter::kTs,
                                                   Counter::kValue};
inline constexpr Counter::Column kCounterLeftOut[] = {Counter::kId};

// No kind of the stream: a graph launch is its kernels' span, and import
// derives the rows again from the kernels' graph ids (kineto_finish.cpp), so
// the export writes none.
inline constexpr GraphLaunch::Column kGraphLaunchLeftOut[] = {
    GraphLaunch::kId,      GraphLaunch::kPid,         GraphLaunch::kDevice, GraphLaunch::kContext, GraphLaunch::kStream,
    GraphLaunch::kGraphId, GraphLaunch::kCorrelation, GraphLaunch::kStart,  GraphLaunch::kEnd};
static_assert(store::covers<GraphLaunch>({}, kGraphLaunchLeftOut),
              "chrome export: handle or leave out each graph_launch column");

}  // namespace gpuscope::formats::chrome_columns
