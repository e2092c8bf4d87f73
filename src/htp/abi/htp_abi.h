// The whole host-device contract in one include.
#pragma once

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_batch.h"
#include "htp/abi/htp_hwinfo.h"
#include "htp/abi/htp_limits.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/htp_fence.h"
#include "htp/abi/htp_partition.h"
#include "htp/abi/htp_session_defaults.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/htp_trace.h"
#include "htp/abi/htp_types.h"
#include "htp/abi/layout.h"
