/*
 * bmc_dl.c - the libfreeipmi and libipmimonitoring entry points the BMC
 * meter uses, opened on first call (bmc_dl.h).  The functions that create
 * a context load their library; a call before a successful load fails as
 * the library's own failures do (NULL or -1), with errno ELIBACC.  The
 * others take a context, which exists only after a load that worked.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <freeipmi/freeipmi.h>
#include <ipmi_monitoring.h>

#include "bmc_dl.h"
#include "se_dynlib.h"

/* ------------------------------------------------------- libfreeipmi */

static struct {
	ipmi_ctx_t (*ctx_create)(void);
	void (*ctx_destroy)(ipmi_ctx_t);
	int (*ctx_close)(ipmi_ctx_t);
	int (*ctx_errnum)(ipmi_ctx_t);
	char *(*ctx_errormsg)(ipmi_ctx_t);
	int (*ctx_find_inband)(ipmi_ctx_t, ipmi_driver_type_t *, int,
			       uint16_t, uint8_t, const char *, unsigned int,
			       unsigned int);
	int (*ctx_open_outofband)(ipmi_ctx_t, const char *, const char *,
				  const char *, uint8_t, uint8_t,
				  unsigned int, unsigned int, unsigned int,
				  unsigned int);
	int (*ctx_open_outofband_2_0)(ipmi_ctx_t, const char *,
				      const char *, const char *,
				      const unsigned char *, unsigned int,
				      uint8_t, uint8_t, unsigned int,
				      unsigned int, unsigned int,
				      unsigned int);
	int (*cmd_raw)(ipmi_ctx_t, uint8_t, uint8_t, const void *,
		       unsigned int, void *, unsigned int);
	ipmi_sdr_ctx_t (*sdr_ctx_create)(void);
	void (*sdr_ctx_destroy)(ipmi_sdr_ctx_t);
	int (*sdr_cache_open)(ipmi_sdr_ctx_t, ipmi_ctx_t, const char *);
	int (*sdr_cache_close)(ipmi_sdr_ctx_t);
	int (*sdr_cache_first)(ipmi_sdr_ctx_t);
	int (*sdr_cache_next)(ipmi_sdr_ctx_t);
	int (*sdr_parse_entity_id_instance_type)(ipmi_sdr_ctx_t, const void *,
						 unsigned int, uint8_t *,
						 uint8_t *, uint8_t *);
	int (*sdr_parse_record_id_and_type)(ipmi_sdr_ctx_t, const void *,
					    unsigned int, uint16_t *,
					    uint8_t *);
} ipmi;

static const se_dynlib_sym_t ipmi_syms[] = {
	{ "ipmi_ctx_create", &ipmi.ctx_create },
	{ "ipmi_ctx_destroy", &ipmi.ctx_destroy },
	{ "ipmi_ctx_close", &ipmi.ctx_close },
	{ "ipmi_ctx_errnum", &ipmi.ctx_errnum },
	{ "ipmi_ctx_errormsg", &ipmi.ctx_errormsg },
	{ "ipmi_ctx_find_inband", &ipmi.ctx_find_inband },
	{ "ipmi_ctx_open_outofband", &ipmi.ctx_open_outofband },
	{ "ipmi_ctx_open_outofband_2_0", &ipmi.ctx_open_outofband_2_0 },
	{ "ipmi_cmd_raw", &ipmi.cmd_raw },
	{ "ipmi_sdr_ctx_create", &ipmi.sdr_ctx_create },
	{ "ipmi_sdr_ctx_destroy", &ipmi.sdr_ctx_destroy },
	{ "ipmi_sdr_cache_open", &ipmi.sdr_cache_open },
	{ "ipmi_sdr_cache_close", &ipmi.sdr_cache_close },
	{ "ipmi_sdr_cache_first", &ipmi.sdr_cache_first },
	{ "ipmi_sdr_cache_next", &ipmi.sdr_cache_next },
	{ "ipmi_sdr_parse_entity_id_instance_type",
	  &ipmi.sdr_parse_entity_id_instance_type },
	{ "ipmi_sdr_parse_record_id_and_type",
	  &ipmi.sdr_parse_record_id_and_type },
};

static se_dynlib_t freeipmi_lib = SE_DYNLIB_INIT(SE_LIBFREEIPMI_SONAME,
						 ipmi_syms);

/* --------------------------------------------------- libipmimonitoring */

static struct {
	int (*init)(unsigned int, int *);
	ipmi_monitoring_ctx_t (*ctx_create)(void);
	void (*ctx_destroy)(ipmi_monitoring_ctx_t);
	int (*ctx_errnum)(ipmi_monitoring_ctx_t);
	char *(*ctx_errormsg)(ipmi_monitoring_ctx_t);
	int (*ctx_sdr_cache_directory)(ipmi_monitoring_ctx_t, const char *);
	int (*ctx_sdr_cache_filenames)(ipmi_monitoring_ctx_t, const char *);
	int (*readings_by_record_id)(ipmi_monitoring_ctx_t, const char *,
				     struct ipmi_monitoring_ipmi_config *,
				     unsigned int, unsigned int *,
				     unsigned int, Ipmi_Monitoring_Callback,
				     void *);
	int (*iterator_next)(ipmi_monitoring_ctx_t);
	int (*read_record_id)(ipmi_monitoring_ctx_t);
	char *(*read_sensor_name)(ipmi_monitoring_ctx_t);
	void *(*read_sensor_reading)(ipmi_monitoring_ctx_t);
	int (*read_sensor_reading_type)(ipmi_monitoring_ctx_t);
	int (*read_sensor_units)(ipmi_monitoring_ctx_t);
} mon;

static const se_dynlib_sym_t mon_syms[] = {
	{ "ipmi_monitoring_init", &mon.init },
	{ "ipmi_monitoring_ctx_create", &mon.ctx_create },
	{ "ipmi_monitoring_ctx_destroy", &mon.ctx_destroy },
	{ "ipmi_monitoring_ctx_errnum", &mon.ctx_errnum },
	{ "ipmi_monitoring_ctx_errormsg", &mon.ctx_errormsg },
	{ "ipmi_monitoring_ctx_sdr_cache_directory",
	  &mon.ctx_sdr_cache_directory },
	{ "ipmi_monitoring_ctx_sdr_cache_filenames",
	  &mon.ctx_sdr_cache_filenames },
	{ "ipmi_monitoring_sensor_readings_by_record_id",
	  &mon.readings_by_record_id },
	{ "ipmi_monitoring_sensor_iterator_next", &mon.iterator_next },
	{ "ipmi_monitoring_sensor_read_record_id", &mon.read_record_id },
	{ "ipmi_monitoring_sensor_read_sensor_name", &mon.read_sensor_name },
	{ "ipmi_monitoring_sensor_read_sensor_reading",
	  &mon.read_sensor_reading },
	{ "ipmi_monitoring_sensor_read_sensor_reading_type",
	  &mon.read_sensor_reading_type },
	{ "ipmi_monitoring_sensor_read_sensor_units", &mon.read_sensor_units },
};

static se_dynlib_t monitoring_lib = SE_DYNLIB_INIT(
	SE_LIBIPMIMONITORING_SONAME, mon_syms);

/* ---------------------------------------------------------- loading */

int bmc_dl_load(char *err, size_t err_len)
{
	if (se_dynlib_require(&freeipmi_lib, err, err_len) ||
	    se_dynlib_require(&monitoring_lib, err, err_len))
		return -1;
	return 0;
}

/* ------------------------------------------------ libfreeipmi wrappers */

ipmi_ctx_t ipmi_ctx_create(void)
{
	return se_dynlib_ready(&freeipmi_lib) ? ipmi.ctx_create() : NULL;
}

void ipmi_ctx_destroy(ipmi_ctx_t ctx)
{
	if (ctx)
		ipmi.ctx_destroy(ctx);
}

int ipmi_ctx_close(ipmi_ctx_t ctx)
{
	return ipmi.ctx_close(ctx);
}

int ipmi_ctx_errnum(ipmi_ctx_t ctx)
{
	return ipmi.ctx_errnum(ctx);
}

char *ipmi_ctx_errormsg(ipmi_ctx_t ctx)
{
	return ipmi.ctx_errormsg(ctx);
}

int ipmi_ctx_find_inband(ipmi_ctx_t ctx, ipmi_driver_type_t *driver_type,
			 int disable_auto_probe, uint16_t driver_address,
			 uint8_t register_spacing, const char *driver_device,
			 unsigned int workaround_flags, unsigned int flags)
{
	return ipmi.ctx_find_inband(ctx, driver_type, disable_auto_probe,
				    driver_address, register_spacing,
				    driver_device, workaround_flags, flags);
}

int ipmi_ctx_open_outofband(ipmi_ctx_t ctx, const char *hostname,
			    const char *username, const char *password,
			    uint8_t authentication_type,
			    uint8_t privilege_level,
			    unsigned int session_timeout,
			    unsigned int retransmission_timeout,
			    unsigned int workaround_flags, unsigned int flags)
{
	return ipmi.ctx_open_outofband(ctx, hostname, username, password,
				       authentication_type, privilege_level,
				       session_timeout,
				       retransmission_timeout,
				       workaround_flags, flags);
}

int ipmi_ctx_open_outofband_2_0(ipmi_ctx_t ctx, const char *hostname,
				const char *username, const char *password,
				const unsigned char *k_g,
				unsigned int k_g_len, uint8_t privilege_level,
				uint8_t cipher_suite_id,
				unsigned int session_timeout,
				unsigned int retransmission_timeout,
				unsigned int workaround_flags,
				unsigned int flags)
{
	return ipmi.ctx_open_outofband_2_0(ctx, hostname, username, password,
					   k_g, k_g_len, privilege_level,
					   cipher_suite_id, session_timeout,
					   retransmission_timeout,
					   workaround_flags, flags);
}

int ipmi_cmd_raw(ipmi_ctx_t ctx, uint8_t lun, uint8_t net_fn,
		 const void *buf_rq, unsigned int buf_rq_len, void *buf_rs,
		 unsigned int buf_rs_len)
{
	return ipmi.cmd_raw(ctx, lun, net_fn, buf_rq, buf_rq_len, buf_rs,
			    buf_rs_len);
}

ipmi_sdr_ctx_t ipmi_sdr_ctx_create(void)
{
	return se_dynlib_ready(&freeipmi_lib) ? ipmi.sdr_ctx_create() : NULL;
}

void ipmi_sdr_ctx_destroy(ipmi_sdr_ctx_t ctx)
{
	if (ctx)
		ipmi.sdr_ctx_destroy(ctx);
}

int ipmi_sdr_cache_open(ipmi_sdr_ctx_t ctx, ipmi_ctx_t ipmi_ctx,
			const char *filename)
{
	return ipmi.sdr_cache_open(ctx, ipmi_ctx, filename);
}

int ipmi_sdr_cache_close(ipmi_sdr_ctx_t ctx)
{
	return ipmi.sdr_cache_close(ctx);
}

int ipmi_sdr_cache_first(ipmi_sdr_ctx_t ctx)
{
	return ipmi.sdr_cache_first(ctx);
}

int ipmi_sdr_cache_next(ipmi_sdr_ctx_t ctx)
{
	return ipmi.sdr_cache_next(ctx);
}

int ipmi_sdr_parse_entity_id_instance_type(ipmi_sdr_ctx_t ctx,
					   const void *sdr_record,
					   unsigned int sdr_record_len,
					   uint8_t *entity_id,
					   uint8_t *entity_instance,
					   uint8_t *entity_instance_type)
{
	return ipmi.sdr_parse_entity_id_instance_type(ctx, sdr_record,
						      sdr_record_len,
						      entity_id,
						      entity_instance,
						      entity_instance_type);
}

int ipmi_sdr_parse_record_id_and_type(ipmi_sdr_ctx_t ctx,
				      const void *sdr_record,
				      unsigned int sdr_record_len,
				      uint16_t *record_id,
				      uint8_t *record_type)
{
	return ipmi.sdr_parse_record_id_and_type(ctx, sdr_record,
						 sdr_record_len, record_id,
						 record_type);
}

/* ------------------------------------------ libipmimonitoring wrappers */

int ipmi_monitoring_init(unsigned int flags, int *errnum)
{
	if (se_dynlib_ready(&monitoring_lib))
		return mon.init(flags, errnum);
	if (errnum)
		*errnum = IPMI_MONITORING_ERR_SYSTEM_ERROR;
	return -1;
}

ipmi_monitoring_ctx_t ipmi_monitoring_ctx_create(void)
{
	return se_dynlib_ready(&monitoring_lib) ? mon.ctx_create() : NULL;
}

void ipmi_monitoring_ctx_destroy(ipmi_monitoring_ctx_t c)
{
	if (c)
		mon.ctx_destroy(c);
}

int ipmi_monitoring_ctx_errnum(ipmi_monitoring_ctx_t c)
{
	return mon.ctx_errnum(c);
}

char *ipmi_monitoring_ctx_errormsg(ipmi_monitoring_ctx_t c)
{
	return mon.ctx_errormsg(c);
}

int ipmi_monitoring_ctx_sdr_cache_directory(ipmi_monitoring_ctx_t c,
					    const char *dir)
{
	return mon.ctx_sdr_cache_directory(c, dir);
}

int ipmi_monitoring_ctx_sdr_cache_filenames(ipmi_monitoring_ctx_t c,
					    const char *format)
{
	return mon.ctx_sdr_cache_filenames(c, format);
}

int ipmi_monitoring_sensor_readings_by_record_id(
	ipmi_monitoring_ctx_t c, const char *hostname,
	struct ipmi_monitoring_ipmi_config *config,
	unsigned int sensor_reading_flags, unsigned int *record_ids,
	unsigned int record_ids_len, Ipmi_Monitoring_Callback callback,
	void *callback_data)
{
	return mon.readings_by_record_id(c, hostname, config,
					 sensor_reading_flags, record_ids,
					 record_ids_len, callback,
					 callback_data);
}

int ipmi_monitoring_sensor_iterator_next(ipmi_monitoring_ctx_t c)
{
	return mon.iterator_next(c);
}

int ipmi_monitoring_sensor_read_record_id(ipmi_monitoring_ctx_t c)
{
	return mon.read_record_id(c);
}

char *ipmi_monitoring_sensor_read_sensor_name(ipmi_monitoring_ctx_t c)
{
	return mon.read_sensor_name(c);
}

void *ipmi_monitoring_sensor_read_sensor_reading(ipmi_monitoring_ctx_t c)
{
	return mon.read_sensor_reading(c);
}

int ipmi_monitoring_sensor_read_sensor_reading_type(ipmi_monitoring_ctx_t c)
{
	return mon.read_sensor_reading_type(c);
}

int ipmi_monitoring_sensor_read_sensor_units(ipmi_monitoring_ctx_t c)
{
	return mon.read_sensor_units(c);
}
